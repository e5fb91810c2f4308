package proxy

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// fileBackedStore wraps the backend so that it resolves a key as a posix
// store does (versitygw's): "." and empty segments vanish, so "p//k" and
// "p/./k" are the object "p/k". A PUT of an object waits until two HEADs
// of it have been answered, so two racing creates are both past their
// fail-fast HEAD (the object absent) before either commits, and only the
// lease can stop the second.
func fileBackedStore(next http.Handler) http.Handler {
	var mu sync.Mutex
	heads := map[string]int{}
	bothHeaded := map[string]chan struct{}{}
	arrived := func(object string) chan struct{} {
		if bothHeaded[object] == nil {
			bothHeaded[object] = make(chan struct{})
		}
		return bothHeaded[object]
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		segments := strings.Split(r.URL.Path, "/")
		kept := segments[:1] // the empty segment before the leading "/"
		for _, s := range segments[1:] {
			if s != "" && s != "." {
				kept = append(kept, s)
			}
		}
		object := strings.Join(kept, "/")
		r.URL.Path, r.URL.RawPath = object, ""
		isObject := len(kept) > 2 // "", the bucket, the key's segments
		switch {
		case !isObject:
		case r.Method == http.MethodPut:
			mu.Lock()
			ready := arrived(object)
			mu.Unlock()
			select {
			case <-ready:
			case <-r.Context().Done():
				return
			}
		case r.Method == http.MethodHead:
			next.ServeHTTP(w, r) // answered before it counts
			mu.Lock()
			if heads[object]++; heads[object] == 2 {
				close(arrived(object))
			}
			mu.Unlock()
			return
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
