package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// inPlaceBody is the upload the in-place check holds one byte short: far
// larger than any buffer between the probe and the store, so a store that
// writes as it receives has most of it written.
const inPlaceBody = 256 << 10

// inPlaceLooks bounds the HEADs the check sends while the upload is held,
// and inPlacePause spaces them: the store may still be writing what it
// received.
const (
	inPlaceLooks = 5
	inPlacePause = 100 * time.Millisecond
)

// probeAtomicUploads checks whether the store shows an upload before its
// last byte: a PutObject of a fresh key is held one byte short while the
// key is HEADed, then cut off. Native: no HEAD finds it. InPlace: one does;
// s3cond's held-back final byte guards nothing on such a store
// (backend.writes_in_place). What a store keeps of the cut-off upload is
// not judged: the probe's client closes the connection, where s3cond
// resets it, and a store may keep a body closed short (versitygw does).
func probeAtomicUploads(ctx context.Context, s *store) Result {
	key := s.key("inplace")
	s.written.wrote(key)
	presigned, err := s3.NewPresignClient(s.clients[1]).PresignPutObject(ctx,
		&s3.PutObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return Result{Verdict: Error, Detail: fmt.Sprintf("presign the held upload: %v", err)}
	}
	body, cut := io.Pipe()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, presigned.URL, body)
	if err != nil {
		return Result{Verdict: Error, Detail: fmt.Sprintf("the held upload: %v", err)}
	}
	req.ContentLength = inPlaceBody
	for name, values := range presigned.SignedHeader {
		if !strings.EqualFold(name, "Host") && !strings.EqualFold(name, "Content-Length") {
			req.Header[name] = values
		}
	}
	answered := make(chan error, 1)
	go func() {
		resp, err := s.pools[1].Do(req)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("the store answered %s to an upload one byte short", resp.Status)
		}
		answered <- err
	}()
	if _, err := cut.Write(make([]byte, inPlaceBody-1)); err != nil {
		return Result{Verdict: Error, Detail: fmt.Sprintf("send the held upload: %v", err)}
	}
	during := seenWhileHeld(ctx, s, key)
	_ = cut.CloseWithError(errors.New("probe: the held upload is cut off"))
	<-answered
	switch during.status {
	case 200:
		return Result{Verdict: InPlace, Detail: fmt.Sprintf("a %d-byte upload held one byte short is seen by a HEAD (200) before its last byte", inPlaceBody)}
	case 404:
		return Result{Verdict: Native, Detail: fmt.Sprintf("a %d-byte upload held one byte short is not seen (HEAD 404, %d times)", inPlaceBody, inPlaceLooks)}
	}
	return Result{Verdict: Error, Detail: "HEAD during the held upload: " + during.String()}
}

// seenWhileHeld HEADs key until it is found or inPlaceLooks HEADs said 404.
func seenWhileHeld(ctx context.Context, s *store, key string) outcome {
	var o outcome
	for look := 0; look < inPlaceLooks; look++ {
		if o = s.head(ctx, key, nil); o.status != 404 {
			return o
		}
		select {
		case <-ctx.Done():
			return o
		case <-time.After(inPlacePause):
		}
	}
	return o
}
