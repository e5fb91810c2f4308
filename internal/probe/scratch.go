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
	// versions are the version IDs the store answered writes of a key
	// with: in a versioned bucket a delete without one would only add a
	// delete marker and keep the probe's object.
	versions map[string][]string
}

func newScratch() *scratch {
	return &scratch{keys: map[string]struct{}{}, uploads: map[string]string{}, versions: map[string][]string{}}
}

// stored records the version ID a write of key was answered with, if any.
func (w *scratch) stored(key, versionID string) {
	if versionID == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.versions[key] = append(w.versions[key], versionID)
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
const cleanupWorkers = 64

// cleanup aborts the uploads and deletes the keys the probe created (each
// version it was answered with, where the store versions), a few at a time; errors are ignored (an upload may be complete, a key deleted
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
		versions := s.written.versions[key]
		jobs = append(jobs, func(ctx context.Context) { s.deleteWritten(ctx, key, versions) })
	}
	s.written.mu.Unlock()
	runBounded(ctx, jobs, cleanupWorkers)
}

// deleteWritten deletes key: each of its versions, then the key itself
// only if it still reads (a write answered without a version, or a store
// answering a version ID it does not keep, as gofakes3's CopyObject
// answers the source's), so that a versioned bucket gets no delete marker.
func (s *store) deleteWritten(ctx context.Context, key string, versions []string) {
	for _, version := range versions {
		_, _ = s.c().DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key, VersionId: &version})
	}
	if len(versions) > 0 {
		if present, err := s.exists(ctx, key); err == nil && !present {
			return
		}
	}
	_, _ = s.c().DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key})
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
