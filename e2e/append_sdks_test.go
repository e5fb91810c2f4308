package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/s3cond/s3cond/internal/testservers"
)

// TestAppendSDKs: boto3 (pip's, 1.43) and @aws-sdk/client-s3 (Node)
// append through s3cond with put_object(WriteOffsetBytes=N) /
// PutObjectCommand, on versitygw and s3rver: a create at 0, an append at
// the size (its answer carrying the new size), a wrong offset answered
// InvalidWriteOffset, and eight client processes appending at one offset,
// of which exactly one wins.
func TestAppendSDKs(t *testing.T) {
	testservers.Require(t, "boto3")
	testservers.Require(t, "node_modules")
	script, err := filepath.Abs(filepath.Join("scripts", "append_boto3.py"))
	if err != nil {
		t.Fatal(err)
	}
	nodeDir, err := filepath.Abs("node")
	if err != nil {
		t.Fatal(err)
	}
	for _, backend := range []BackendKind{BackendVersityGW, BackendS3rver} {
		for _, client := range []string{"boto3", "node"} {
			t.Run(string(backend)+"/"+client, func(t *testing.T) {
				e, _ := newAppendEnv(t, backend)
				py := scriptCompat{e: e, program: "python3", script: script, dir: t.TempDir()}
				if client == "node" {
					py = scriptCompat{e: e, program: "node", script: filepath.Join(nodeDir, "append.mjs"), dir: nodeDir}
				}
				testAppendClient(t, e, py)
			})
		}
	}
}

func testAppendClient(t *testing.T, e *Env, py scriptCompat) {
	t.Helper()
	ctx := t.Context()
	appendText := func(offset int, text string) (scriptResult, error) {
		return py.run(t, "append", appendBucket, "boto3-log", strconv.Itoa(offset), text)
	}
	if _, err := appendText(0, "one,"); err != nil {
		t.Fatalf("append at 0: %v", err)
	}
	r, err := appendText(4, "two,")
	if err != nil {
		t.Fatalf("append at 4: %v", err)
	}
	if !strings.HasSuffix(r.Version, " 8") {
		t.Errorf("the answer (ETag, Size): %q, want the size 8", r.Version)
	}
	if _, err = appendText(4, "late"); !isScriptError(err, 400, "InvalidWriteOffset") {
		t.Fatalf("append at a stale offset: %v, want 400 InvalidWriteOffset", err)
	}

	wins := make([]error, 8)
	var wg sync.WaitGroup
	for i := range wins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, wins[i] = appendText(8, fmt.Sprintf("racer %d;", i))
		}()
	}
	wg.Wait()
	winner := -1
	for i, err := range wins {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("racers %d and %d both won", winner, i)
		case err == nil:
			winner = i
		case !isScriptError(err, 400, "InvalidWriteOffset") && !isScriptError(err, 409, "ConditionalRequestConflict"):
			t.Errorf("racer %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no racer won: %v", wins)
	}
	want := []byte(fmt.Sprintf("one,two,racer %d;", winner))
	if got := getBytes(t, ctx, e.BackendClient(), appendBucket, "boto3-log"); !bytes.Equal(got, want) {
		t.Fatalf("the store holds %q, want %q", got, want)
	}
}

// isScriptError reports whether err is a script's S3 error of this status
// and code.
func isScriptError(err error, status int, code string) bool {
	var s3e *clientS3Error
	return errors.As(err, &s3e) && s3e.Status == status && s3e.Code == code
}
