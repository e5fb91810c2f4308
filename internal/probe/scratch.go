package probe

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// scratch is what the probe wrote: every key it sent a write to and every
// multipart upload it started. Cleanup removes exactly these and never
// what a listing returns: a store that ignores a listing's prefix would
// otherwise hand the probe other people's objects and uploads to delete.
type scratch struct {
	mu      sync.Mutex
	keys    map[string]struct{}
	uploads map[string]string // upload id → key
}

func newScratch() *scratch {
	return &scratch{keys: map[string]struct{}{}, uploads: map[string]string{}}
}

// wrote records key before the write is sent: a write whose answer is lost
// may still have created it.
func (w *scratch) wrote(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.keys[key] = struct{}{}
}

func (w *scratch) started(key, uploadID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.keys[key] = struct{}{}
	w.uploads[uploadID] = key
}

// completed forgets an upload the store reported complete: nothing is left
// to abort.
func (w *scratch) completed(uploadID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.uploads, uploadID)
}

// cleanupWorkers bounds the requests cleanup has in flight.
const cleanupWorkers = 8

// cleanup aborts the uploads and deletes the keys the probe created, a few
// at a time; errors are ignored (an upload may be complete, a key deleted
// by the probe already), and ctx bounds the whole.
func (s *store) cleanup(ctx context.Context) {
	s.written.mu.Lock()
	var jobs []func(context.Context)
	for id, key := range s.written.uploads {
		jobs = append(jobs, func(ctx context.Context) {
			_, _ = s.c().AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: &key, UploadId: &id})
		})
	}
	for key := range s.written.keys {
		jobs = append(jobs, func(ctx context.Context) {
			_, _ = s.c().DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key})
		})
	}
	s.written.mu.Unlock()
	runBounded(ctx, jobs, cleanupWorkers)
}

// runBounded runs jobs with at most workers at a time, until ctx ends.
func runBounded(ctx context.Context, jobs []func(context.Context), workers int) {
	next := make(chan func(context.Context))
	var wg sync.WaitGroup
	for range min(workers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range next {
				job(ctx)
			}
		}()
	}
	for _, job := range jobs {
		select {
		case next <- job:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(next)
	wg.Wait()
}
