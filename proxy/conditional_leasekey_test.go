package proxy

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// fileBackedStore wraps the backend so that it resolves a key as a posix
// store does (versitygw's): "." and empty segments vanish, so "p//k" and
// "p/./k" are the object "p/k". Its PUTs take a while, so two racing
// creates are both past their fail-fast HEAD before either commits.
func fileBackedStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		segments := strings.Split(r.URL.Path, "/")
		kept := segments[:1] // the empty segment before the leading "/"
		for _, s := range segments[1:] {
			if s != "" && s != "." {
				kept = append(kept, s)
			}
		}
		r.URL.Path, r.URL.RawPath = strings.Join(kept, "/"), ""
		if r.Method == http.MethodPut {
			time.Sleep(30 * time.Millisecond)
		}
		next.ServeHTTP(w, r)
	})
}

// TestNormalizedKeysShareOneLease: under key_policy normalize, "p/k" and
// "p//k" name one object of a file-backed store, so they share one lease:
// of two racing If-None-Match: * creates on them, exactly one succeeds.
func TestNormalizedKeysShareOneLease(t *testing.T) {
	f := newGuardFixture(t, guardOptions{wrap: fileBackedStore, keyPolicy: KeyPolicyNormalize})
	for round := range 8 {
		names := []string{fmt.Sprintf("p%d/k", round), fmt.Sprintf("p%d//k", round)}
		if round%2 == 1 {
			names[1] = fmt.Sprintf("p%d/./k", round)
		}
		var wg sync.WaitGroup
		errs := make([]error, len(names))
		start := make(chan struct{})
		for i, name := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = f.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucketName),
					Key: aws.String(name), Body: strings.NewReader(name), IfNoneMatch: aws.String("*")})
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch code := errorCode(err); {
			case err == nil:
				won++
			case code != "PreconditionFailed" && code != "ConditionalRequestConflict":
				t.Fatalf("round %d: create of %q: %v", round, names[i], err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d of the creates on %q succeeded, want exactly one", round, won, names)
		}
	}
}
