package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/testservers"
)

// compatWriteEnv names the variable that makes TestCompatibilityMatrix
// rewrite docs/compatibility.md instead of comparing it with the run.
const compatWriteEnv = "S3COND_WRITE_COMPAT"

const (
	compatSmallSize = 64 << 10
	compatBigSize   = 16 << 20
	compatPartSize  = 5 << 20 // S3's smallest part size, so 16 MiB needs 4 parts
)

func compatClients() []compatEntry {
	return []compatEntry{
		{name: "aws-cli", conditionalPut: true, conditionalDelete: true, open: newAWSCLICompat,
			note: "`aws s3api put-object/get-object/list-objects-v2/copy-object/delete-object`, conditionals with " +
				"`--if-none-match` and `--if-match`; the multipart upload is `aws s3 cp` with `multipart_chunksize = 5MB` " +
				"in the CLI config file."},
		{name: "boto3", conditionalPut: true, conditionalDelete: true, open: newBoto3Compat,
			note: "`put_object`/`get_object`/`list_objects_v2`/`copy_object`/`delete_object` with `IfNoneMatch`/`IfMatch`; " +
				"the multipart upload is `upload_file` with a 5 MiB `TransferConfig` (e2e/scripts/compat_boto3.py)."},
		{name: "boto3-debian", open: func(t *testing.T, e *Env) compatClient { return newBoto3Flavour(t, e, "debian-boto3") },
			note: "Debian's `python3-boto3` (bookworm: boto3 1.26, botocore 1.29, `/usr/bin/python3`), driven by the same " +
				"script as boto3; it writes boolean headers as `True` (S3 accepts them; TestBoto3sAsS3Reads checks " +
				"DeleteObjects, CreateBucket with object lock and copies of keys holding `?` with both boto3s). Its " +
				"model has no `IfMatch`/`IfNoneMatch` (n/a; scripts/conformance adds them with an `AWS_DATA_PATH` file)."},
		{name: "aws-sdk-go-v2", conditionalPut: true, conditionalDelete: true, open: func(_ *testing.T, e *Env) compatClient { return goSDKCompat{e} },
			note: "The defaults `config.LoadDefaultConfig` gives (CRC32 checksums on uploads), `IfNoneMatch`/`IfMatch` on " +
				"PutObject and DeleteObject; the multipart upload is CreateMultipartUpload, UploadPart (5 MiB) and " +
				"CompleteMultipartUpload."},
		{name: "minio-go", conditionalPut: true, conditionalDelete: false, open: func(_ *testing.T, e *Env) compatClient { return minioCompat{e} },
			note: "Signed aws-chunked uploads. Conditional puts through `PutObjectOptions.SetMatchETagExcept(\"*\")` " +
				"(If-None-Match) and `SetMatchETag` (If-Match); `RemoveObjectOptions` has no If-Match, so conditional " +
				"delete is n/a. The multipart upload is `PutObject` with `PartSize` 5 MiB."},
		{name: "node-sdk", conditionalPut: true, conditionalDelete: true, open: newNodeCompat,
			note: "Its default `STREAMING-UNSIGNED-PAYLOAD-TRAILER` uploads with CRC32; `IfNoneMatch`/`IfMatch` on " +
				"PutObjectCommand and DeleteObjectCommand; the multipart upload is UploadPartCommand with 5 MiB parts " +
				"(e2e/node/compat.mjs)."},
		{name: "rclone", open: newRcloneCompat,
			note: "`copyto`, `lsf -R`, `deletefile`, server-side `copyto` within the remote, run with `--s3-no-check-bucket` " +
				"and without `AWS_CA_BUNDLE`; the multipart upload uses `--s3-upload-cutoff 5M --s3-chunk-size 5M`. " +
				"rclone has no conditional-write options (n/a)."},
		{name: "s3cmd", open: newS3cmdCompat,
			note: "`put`, `get`, `ls --recursive`, `cp`, `del` with `--host`, `--host-bucket` (path style), `--no-ssl` " +
				"and SigV4; the multipart upload uses `--multipart-chunk-size-mb=5`. s3cmd has no conditional-write " +
				"options (n/a)."},
	}
}

// TestCompatibilityMatrix runs every client through s3cond to versitygw
// for each capability of docs/compatibility.md and checks each result
// against what versitygw really stored. It then compares the document with
// the run, or rewrites it when S3COND_WRITE_COMPAT=1.
func TestCompatibilityMatrix(t *testing.T) {
	e := NewEnv(t)
	clients := compatClients()
	matrix := newCompatMatrix()
	big := writePatternFile(t, t.TempDir(), 600, compatBigSize)
	t.Run("clients", func(t *testing.T) {
		// All rows at once, not t.Parallel's GOMAXPROCS at a time: the rows
		// mostly wait for client processes, and the AWS CLI's row (a Python
		// start-up per request) is the longest.
		var rows sync.WaitGroup
		for _, entry := range clients {
			rows.Go(func() {
				t.Run(entry.name, func(t *testing.T) {
					runCompatRow(t, e, compatStore{client: e.BackendClient(), partsInETag: true}, entry, matrix, big)
				})
			})
		}
		rows.Wait()
	})
	checkCompatDoc(t, e, matrix, clients)
}

// TestCompatibilityOnEmbeddedDefaults runs the same checks with every client
// against `s3cond` with no configuration: the embedded development store
// (gofakes3 with s3cond's corrections) and the development key. The checks
// inspect what was stored through s3cond itself, since the store has no
// address of its own to users. docs/compatibility.md is not involved.
func TestCompatibilityOnEmbeddedDefaults(t *testing.T) {
	if TargetMode() == ModeDirect {
		t.Skip("checks s3cond's embedded defaults; S3COND_E2E_TARGET=direct runs clients against versitygw")
	}
	proxy := testservers.StartS3condDefaults(t)
	e := &Env{Mode: ModeS3cond, Endpoint: proxy.Endpoint, RW: devKey, RO: devKey, Granted: devKey}
	// The embedded store gives a multipart object its whole MD5 as ETag.
	store := compatStore{client: NewS3Client(proxy.Endpoint, devKey, nil)}
	big := writePatternFile(t, t.TempDir(), 601, compatBigSize)
	matrix := newCompatMatrix()
	var rows sync.WaitGroup
	for _, entry := range compatClients() {
		rows.Go(func() {
			t.Run(entry.name, func(t *testing.T) { runCompatRow(t, e, store, entry, matrix, big) })
		})
	}
	rows.Wait()
}

// compatStore is how the checks reach the store behind s3cond, to set up
// objects and inspect what a client's request stored.
type compatStore struct {
	client *s3.Client
	// partsInETag: a multipart object's ETag ends in -N, its part count, as
	// on S3, so a check can tell that a client split its upload.
	partsInETag bool
}

// runCompatRow runs one client through every capability.
func runCompatRow(t *testing.T, e *Env, store compatStore, entry compatEntry, matrix *compatMatrix, big patternFile) {
	bucket := "compat-" + entry.name
	CreateBucket(t, e.Client(t, e.RW), bucket)
	client := entry.open(t, e)
	t.Run("version", func(t *testing.T) {
		version, err := client.Version(t)
		if err != nil || version == "" {
			t.Errorf("%s: no version (%q): %v", entry.name, version, err)
			version = "unknown"
		}
		matrix.setVersion(entry.name, version)
	})
	for _, capability := range compatCapabilities {
		if !entry.has(capability.needs) {
			matrix.setCell(entry.name, capability.id, compatNA)
			continue
		}
		if reason, differs := compatDirectDiffers[entry.name+"/"+capability.id]; differs && e.Mode == ModeDirect {
			t.Run(capability.id, func(t *testing.T) { t.Skip(reason) })
			continue
		}
		check, ok := compatChecks[capability.id]
		if !ok {
			t.Fatalf("no check for capability %s", capability.id)
		}
		cell := compatCell{client: client, backend: store.client, partsInETag: store.partsInETag, bucket: bucket, big: big,
			recordParts: func(n int) { matrix.setParts(entry.name, n) }}
		outcome := compatFail
		if t.Run(capability.id, func(t *testing.T) { check(t, cell) }) {
			outcome = compatPass
		}
		matrix.setCell(entry.name, capability.id, outcome)
	}
}

// compatDirectDiffers lists cells that fail against versitygw itself, so
// are skipped only when S3COND_E2E_TARGET=direct (s3cond passes them).
var compatDirectDiffers = map[string]string{
	"node-sdk/if-none-match": versitygwEarly412,
	"node-sdk/if-match":      versitygwEarly412,
}

const versitygwEarly412 = "versitygw answers 412 before reading the 64 KiB body and resets the connection; " +
	"the Node SDK then reports ECONNRESET, not the 412"

// compatCell is what one check works with. The backend client talks to
// versitygw directly: it sets up the objects a check needs and inspects
// what the client's request really did.
type compatCell struct {
	client      compatClient
	backend     *s3.Client
	partsInETag bool // see compatStore
	bucket      string
	big         patternFile
	recordParts func(int)
}

var compatChecks = map[string]func(t *testing.T, x compatCell){
	"put": func(t *testing.T, x compatCell) {
		data := PatternBytes(601, compatSmallSize)
		requireClientOK(t, "put", x.client.Put(t, x.bucket, "put/object", x.file(t, data), putCondition{}))
		x.requireStored(t, "put/object", data)
	},
	"get": func(t *testing.T, x compatCell) {
		data := PatternBytes(602, compatSmallSize)
		x.store(t, "get/object", data)
		out := filepath.Join(t.TempDir(), "downloaded")
		requireClientOK(t, "get", x.client.Get(t, x.bucket, "get/object", out))
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("read the downloaded file: %v", err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("downloaded %d bytes that differ from the %d stored", len(got), len(data))
		}
	},
	"list": func(t *testing.T, x compatCell) {
		want := []string{"list/a", "list/b", "list/sub/c"}
		for _, key := range append([]string{"listing-outside"}, want...) {
			x.store(t, key, []byte(key))
		}
		got, err := x.client.List(t, x.bucket, "list/")
		requireClientOK(t, "list", err)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("listed %q under list/, want %q", got, want)
		}
	},
	"multipart": func(t *testing.T, x compatCell) {
		const key = "multipart/object"
		requireClientOK(t, "multipart upload", x.client.Multipart(t, x.bucket, key, x.big.path, compatPartSize))
		head, err := x.backend.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(x.bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("HEAD the uploaded object on the backend: %v", err)
		}
		if x.partsInETag {
			parts := multipartParts(aws.ToString(head.ETag))
			if parts < 2 {
				t.Fatalf("backend ETag %s is not that of a multipart object: the client did not split the upload", aws.ToString(head.ETag))
			}
			x.recordParts(parts)
		}
		out, err := x.backend.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(x.bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("get the uploaded object from the backend: %v", err)
		}
		defer out.Body.Close()
		sum, size, err := SHA256(out.Body)
		if err != nil {
			t.Fatal(err)
		}
		if sum != x.big.sha256 || size != x.big.size {
			t.Fatalf("backend holds %d bytes with SHA-256 %s, want %d bytes with %s", size, sum, x.big.size, x.big.sha256)
		}
		requireNoUploads(t, t.Context(), x.backend, x.bucket)
	},
	"copy": func(t *testing.T, x compatCell) {
		data := PatternBytes(603, compatSmallSize)
		x.store(t, "copy/source", data)
		requireClientOK(t, "copy", x.client.Copy(t, x.bucket, "copy/source", "copy/dest"))
		x.requireStored(t, "copy/dest", data)
		x.requireStored(t, "copy/source", data)
	},
	"delete": func(t *testing.T, x compatCell) {
		x.store(t, "delete/object", []byte("to be deleted"))
		requireClientOK(t, "delete", x.client.Delete(t, x.bucket, "delete/object", ""))
		requireMissing(t, t.Context(), x.backend, x.bucket, "delete/object")
	},
	"if-none-match": func(t *testing.T, x compatCell) {
		const key = "conditional/create"
		first, second := PatternBytes(604, compatSmallSize), PatternBytes(605, compatSmallSize)
		requireClientOK(t, "put If-None-Match: * of a new key",
			x.client.Put(t, x.bucket, key, x.file(t, first), putCondition{IfNoneMatch: "*"}))
		x.requireStored(t, key, first)
		requirePreconditionFailed(t, "second put If-None-Match: *",
			x.client.Put(t, x.bucket, key, x.file(t, second), putCondition{IfNoneMatch: "*"}))
		x.requireStored(t, key, first)
	},
	"if-match": func(t *testing.T, x compatCell) {
		const key = "conditional/replace"
		current, replacement := PatternBytes(606, compatSmallSize), PatternBytes(607, compatSmallSize)
		etag := x.store(t, key, current)
		requirePreconditionFailed(t, "put If-Match: <wrong ETag>",
			x.client.Put(t, x.bucket, key, x.file(t, replacement), putCondition{IfMatch: otherETag}))
		x.requireStored(t, key, current)
		requireClientOK(t, "put If-Match: <current ETag>",
			x.client.Put(t, x.bucket, key, x.file(t, replacement), putCondition{IfMatch: etag}))
		x.requireStored(t, key, replacement)
	},
	"delete-if-match": func(t *testing.T, x compatCell) {
		const key = "conditional/delete"
		data := PatternBytes(608, compatSmallSize)
		etag := x.store(t, key, data)
		requirePreconditionFailed(t, "delete If-Match: <wrong ETag>", x.client.Delete(t, x.bucket, key, otherETag))
		x.requireStored(t, key, data)
		requireClientOK(t, "delete If-Match: <current ETag>", x.client.Delete(t, x.bucket, key, etag))
		requireMissing(t, t.Context(), x.backend, x.bucket, key)
	},
}

// file writes data to a fresh file for the client to upload.
func (x compatCell) file(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "upload.bin")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// store puts data on the backend directly and returns its ETag.
func (x compatCell) store(t *testing.T, key string, data []byte) string {
	t.Helper()
	return aws.ToString(putBytes(t, t.Context(), x.backend, x.bucket, key, data).ETag)
}

func (x compatCell) requireStored(t *testing.T, key string, want []byte) {
	t.Helper()
	if got := getBytes(t, t.Context(), x.backend, x.bucket, key); !bytes.Equal(got, want) {
		t.Fatalf("backend holds %d bytes under %s that differ from the %d expected", len(got), key, len(want))
	}
}

func requireClientOK(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// requirePreconditionFailed accepts a 412 PreconditionFailed (status 0: the
// client showed only the code).
func requirePreconditionFailed(t *testing.T, what string, err error) {
	t.Helper()
	var s3Err *clientS3Error
	if !errors.As(err, &s3Err) || s3Err.Code != "PreconditionFailed" || (s3Err.Status != 0 && s3Err.Status != 412) {
		t.Fatalf("%s: want 412 PreconditionFailed, got %v", what, err)
	}
}

// multipartParts is N of a multipart ETag "<md5>-N", or 0 for any other.
func multipartParts(etag string) int {
	_, count, ok := strings.Cut(strings.Trim(etag, `"`), "-")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(count)
	if err != nil {
		return 0
	}
	return n
}

// checkCompatDoc compares docs/compatibility.md with this run, or rewrites
// it. A run of only some clients (-run) or against versitygw directly
// describes something else, so it is neither compared nor written.
func checkCompatDoc(t *testing.T, e *Env, matrix *compatMatrix, clients []compatEntry) {
	if e.Mode == ModeDirect {
		t.Log("S3COND_E2E_TARGET=direct: docs/compatibility.md describes clients through s3cond; not compared")
		return
	}
	if !matrix.complete(clients) {
		t.Log("only part of the matrix ran; docs/compatibility.md not compared")
		return
	}
	checkGeneratedDoc(t, "compatibility.md", matrix.render(clients), "TestCompatibilityMatrix")
}

// firstDifference describes the first line where a and b differ.
func firstDifference(a, b string) (string, bool) {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: committed %q, run %q", i+1, x, y), true
		}
	}
	return "", false
}
