package probe

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc64"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3cond/s3cond/sigv4"
)

// BodyFraming is the capability behind backend.conditional_body_framing:
// auto. Native: the store reads an unsigned aws-chunked upload with a
// CRC64NVME trailer as its decoded bytes, and stores nothing of one whose
// trailer is wrong or whose final chunk never came before a FIN. Only then
// does s3cond's framed body make an abort independent of how the
// connection closes (docs/spec.md §4).
const BodyFraming = "body_framing"

// framingPayload is the check's object: small, one chunk.
const framingPayload = "s3cond framing check: the decoded bytes of one chunk"

// framedUpload is how a framed check body ends.
type framedUpload int

const (
	framedComplete framedUpload = iota // final chunk and the right CRC64NVME
	framedWrongCRC                     // final chunk and a wrong CRC64NVME
	framedCutOff                       // no final chunk; the connection closes (FIN)
)

// Framing checks BodyFraming on the store: a framed upload must be stored
// as its payload, and one with a wrong trailer or cut off before its final
// chunk must leave nothing. It writes under opts.Prefix in opts.Bucket
// (probe_bucket) and removes what it wrote; with no opts.Bucket, in a
// scratch bucket it creates and deletes, never in a bucket it found: that
// may be a production bucket whose versions, retention or notifications
// would keep or announce the check's objects.
func Framing(ctx context.Context, opts Options) Result {
	opts = opts.withDefaults()
	runCtx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	scratchBucket := false
	if opts.Bucket == "" {
		bucket, err := createScratchBucket(runCtx, opts, "")
		if err != nil {
			return Result{Verdict: Error, Detail: "framing: " + err.Error()}
		}
		opts.Bucket, scratchBucket = bucket, true
	}
	s := newStore(opts)
	defer func() {
		cleanCtx, cancelClean := context.WithTimeout(context.WithoutCancel(ctx), opts.cleanupBound())
		defer cancelClean()
		s.cleanup(cleanCtx)
		if scratchBucket {
			_, _ = s.c().DeleteBucket(cleanCtx, &s3.DeleteBucketInput{Bucket: &s.bucket})
		}
		s.close()
	}()
	return checkFraming(runCtx, s, opts)
}

func checkFraming(ctx context.Context, s *store, opts Options) Result {
	good := s.key("framing")
	if status, err := sendFramed(ctx, s, opts, good, framedComplete); err != nil {
		return Result{Verdict: Error, Detail: "a framed upload: " + err.Error()}
	} else if status != http.StatusOK {
		return Result{Verdict: Refused, Detail: fmt.Sprintf("a framed upload answered %d", status)}
	}
	stored, err := s.c().GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &good})
	if err != nil {
		return Result{Verdict: Error, Detail: "GET the framed upload: " + answered(0, nil, err).String()}
	}
	body, err := io.ReadAll(stored.Body)
	stored.Body.Close()
	if err != nil || string(body) != framingPayload {
		return Result{Verdict: Ignored, Detail: fmt.Sprintf("a framed upload is stored as %d bytes, not its %d-byte payload (the framing is kept as data)", len(body), len(framingPayload))}
	}
	for _, c := range []struct {
		end  framedUpload
		what string
	}{{framedWrongCRC, "with a wrong CRC64NVME trailer"}, {framedCutOff, "cut off before its final chunk (FIN)"}} {
		key := s.key("framing")
		_, _ = sendFramed(ctx, s, opts, key, c.end) // the answer may be none: judged by what is stored
		present, err := s.exists(ctx, key)
		switch {
		case err != nil:
			return Result{Verdict: Error, Detail: err.Error()}
		case present:
			return Result{Verdict: Partial, Detail: "the store reads framed uploads but keeps one " + c.what}
		}
	}
	return Result{Verdict: Native, Detail: "a framed upload is stored decoded; one with a wrong trailer or cut off before its final chunk is not"}
}

// sendFramed PUTs framingPayload to key as an unsigned aws-chunked stream
// ending as end says, and returns the status (0 when the connection closed
// without an answer, as a cut-off upload's may).
func sendFramed(ctx context.Context, s *store, opts Options, key string, end framedUpload) (int, error) {
	stream, length := frameForCheck(end)
	u, err := objectURL(opts, key)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, bytes.NewReader(stream))
	if err != nil {
		return 0, fmt.Errorf("build the framed upload: %w", err)
	}
	req.ContentLength = length // longer than a cut-off stream: sendCutOff half-closes the connection short
	req.Header.Set("Content-Encoding", "aws-chunked")
	req.Header.Set("X-Amz-Decoded-Content-Length", strconv.Itoa(len(framingPayload)))
	req.Header.Set("X-Amz-Trailer", framingTrailer)
	const payloadHash = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	creds, err := framingCredentials(opts).Retrieve(ctx)
	if err != nil {
		return 0, fmt.Errorf("credentials: %w", err)
	}
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err := signer.SignHTTP(ctx, creds, req, payloadHash, "s3", opts.Region, time.Now()); err != nil {
		return 0, fmt.Errorf("sign the framed upload: %w", err)
	}
	s.written.wrote(key) // cleanup deletes only what the probe recorded writing
	if end == framedCutOff {
		status, header, err := sendCutOff(ctx, opts, req, stream)
		s.written.stored(key, header.Get("X-Amz-Version-Id"))
		return status, err
	}
	resp, err := s.pools[1].Do(req)
	if err != nil {
		return 0, err
	}
	s.written.stored(key, resp.Header.Get("X-Amz-Version-Id"))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// framingTrailer is the trailer the proxy's framing sends (CRC64NVME, S3's
// default object checksum): the check proves the store honours that one.
const framingTrailer = "x-amz-checksum-crc64nvme"

// frameForCheck is framingPayload as one chunk and its trailer, and the
// Content-Length to declare: a cut-off stream is sent without its final
// chunk but declares the whole length, so the store sees a FIN mid-body.
func frameForCheck(end framedUpload) ([]byte, int64) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%x\r\n%s\r\n", len(framingPayload), framingPayload)
	body := b.Len()
	crc := sigv4.NewCRC64NVME()
	crc.Write([]byte(framingPayload))
	sum := crc.Sum64()
	if end == framedWrongCRC {
		sum = ^sum
	}
	var raw [crc64.Size]byte
	binary.BigEndian.PutUint64(raw[:], sum)
	fmt.Fprintf(&b, "0\r\n%s:%s\r\n\r\n", framingTrailer, base64.StdEncoding.EncodeToString(raw[:]))
	if end == framedCutOff {
		return b.Bytes()[:body], int64(b.Len())
	}
	return b.Bytes(), int64(b.Len())
}

// framingCredentials are the probe's, as newStore takes them.
func framingCredentials(opts Options) aws.CredentialsProvider {
	if opts.Credentials != nil {
		return opts.Credentials
	}
	return credentials.NewStaticCredentialsProvider(opts.AccessKeyID, opts.SecretKey, "")
}

// objectURL addresses key in opts.Bucket as the probe's SDK clients do.
func objectURL(opts Options, key string) (string, error) {
	u, err := url.Parse(opts.Endpoint)
	if err != nil {
		return "", fmt.Errorf("endpoint: %w", err)
	}
	if opts.PathStyle {
		u.Path = "/" + opts.Bucket + "/" + key
	} else {
		u.Host = opts.Bucket + "." + u.Host
		u.Path = "/" + key
	}
	return u.String(), nil
}

// createScratchBucket creates the bucket named like opts.Prefix and
// suffix. A key scoped to some buckets may not create one: the error says
// that probe_bucket lets the check run in a bucket it may write instead.
func createScratchBucket(ctx context.Context, opts Options, suffix string) (string, error) {
	s := newStore(opts)
	defer s.close()
	bucket := strings.TrimSuffix(opts.Prefix, "/") + suffix
	in := &s3.CreateBucketInput{Bucket: &bucket}
	if opts.Region != "us-east-1" { // S3 wants the region named everywhere else
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(opts.Region)}
	}
	if _, err := s.c().CreateBucket(ctx, in); err != nil {
		return "", fmt.Errorf("creating the scratch bucket %s failed: %s (set probe_bucket to a bucket s3cond's key may write, and the check runs there under a scratch prefix)", bucket, answered(0, nil, err))
	}
	return bucket, nil
}
