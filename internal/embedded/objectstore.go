package embedded

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3bolt"
)

// objectStore is gofakes3's bbolt backend, made safe to read while it is
// written.
//
// Why: s3bolt decodes an object without copying it, so the bytes and the
// hash it returns point into bbolt's memory map after the read transaction
// has ended. A write that grows the file remaps it, and the next use of
// those bytes faults, which kills the whole process (a CopyObject of a
// 12 MB object did: gofakes3's copy reads the source's hash after writing
// the copy). A write that reuses freed pages would instead change the bytes
// under a GET that is still streaming them.
//
// So reads copy what they return before any write may run, and writes run
// one at a time, never while a read copies. An upload's body is read before
// its write takes the lock, so a slow client holds up nobody.
type objectStore struct {
	*s3bolt.Backend
	// mu: readers copy under RLock; every method that writes the file
	// holds Lock.
	mu sync.RWMutex
}

var _ gofakes3.Backend = (*objectStore)(nil)

func newObjectStore(backend *s3bolt.Backend) *objectStore {
	return &objectStore{Backend: backend}
}

func (s *objectStore) GetObject(bucket, key string, rangeRequest *gofakes3.ObjectRangeRequest) (*gofakes3.Object, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	obj, err := s.Backend.GetObject(bucket, key, rangeRequest)
	if err != nil {
		return nil, err
	}
	return ownedCopy(obj)
}

func (s *objectStore) HeadObject(bucket, key string) (*gofakes3.Object, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	obj, err := s.Backend.HeadObject(bucket, key)
	if err != nil {
		return nil, err
	}
	return ownedCopy(obj)
}

// ownedCopy returns obj with its contents and hash copied out of the
// database's memory.
func ownedCopy(obj *gofakes3.Object) (*gofakes3.Object, error) {
	copied := *obj
	copied.Hash = bytes.Clone(obj.Hash)
	if obj.Contents != nil {
		data, err := io.ReadAll(obj.Contents)
		_ = obj.Contents.Close()
		if err != nil {
			return nil, fmt.Errorf("embedded store: copy object %s: %w", obj.Name, err)
		}
		copied.Contents = io.NopCloser(bytes.NewReader(data))
	}
	return &copied, nil
}

// PutObject replaces the object whole, metadata included, as S3 does.
// s3bolt instead merges the replaced object's metadata into the new one's,
// so an object overwritten without a checksum kept its predecessor's
// x-amz-checksum-* and failed every client's checksum validation on GET.
// The old object is therefore removed first, inside the write lock, so no
// read sees the gap.
func (s *objectStore) PutObject(bucket, key string, meta map[string]string, input io.Reader, size int64, conditions *gofakes3.PutConditions) (gofakes3.PutObjectResult, error) {
	// The whole body first (s3bolt holds it in memory anyway), outside
	// the lock.
	body, err := gofakes3.ReadAll(input, size)
	if err != nil {
		return gofakes3.PutObjectResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if conditions == nil { // gofakes3's own conditions read the old object
		if _, err := s.Backend.DeleteObject(bucket, key); err != nil {
			return gofakes3.PutObjectResult{}, err
		}
	}
	return s.Backend.PutObject(bucket, key, meta, bytes.NewReader(body), size, conditions)
}

func (s *objectStore) ListBucket(bucket string, prefix *gofakes3.Prefix, page gofakes3.ListBucketPage) (*gofakes3.ObjectList, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.Backend.ListBucket(bucket, prefix, page)
}

// CopyObject is gofakes3.CopyObject on the safe reads and writes above; the
// embedded s3bolt one reads the source's hash after the copy's write.
func (s *objectStore) CopyObject(srcBucket, srcKey, dstBucket, dstKey string, meta map[string]string) (gofakes3.CopyObjectResult, error) {
	src, err := s.GetObject(srcBucket, srcKey, nil)
	if err != nil {
		return gofakes3.CopyObjectResult{}, err
	}
	defer src.Contents.Close()
	if _, err := s.PutObject(dstBucket, dstKey, meta, src.Contents, src.Size, nil); err != nil {
		return gofakes3.CopyObjectResult{}, err
	}
	return gofakes3.CopyObjectResult{
		ETag:         gofakes3.FormatETag(src.Hash),
		LastModified: gofakes3.NewContentTime(time.Now()),
	}, nil
}

func (s *objectStore) DeleteObject(bucket, key string) (gofakes3.ObjectDeleteResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Backend.DeleteObject(bucket, key)
}

func (s *objectStore) DeleteMulti(bucket string, keys ...string) (gofakes3.MultiDeleteResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Backend.DeleteMulti(bucket, keys...)
}

// CreateBucket succeeds for a bucket that exists already, as S3 does in
// us-east-1 (s3cond's default region) for a bucket its caller owns; gofakes3
// answers 409 BucketAlreadyExists, which tools take for someone else's
// bucket. It matters here because the store creates a bucket on first use:
// `s3cmd mb` asks for the new bucket's location first, which creates it.
func (s *objectStore) CreateBucket(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if exists, err := s.Backend.BucketExists(name); err == nil && exists {
		return nil
	}
	return s.Backend.CreateBucket(name)
}

func (s *objectStore) DeleteBucket(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Backend.DeleteBucket(name)
}

func (s *objectStore) ForceDeleteBucket(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Backend.ForceDeleteBucket(name)
}
