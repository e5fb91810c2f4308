package embedded

import (
	"net/http"

	"github.com/johannesboyne/gofakes3"
)

// unversionedBuckets answers GetBucketVersioning as S3 does for a bucket
// whose versioning was never enabled: a document without a Status.
//
// Why: gofakes3 answers with empty <Status/> and <MfaDelete/> elements, which
// some clients read as "versioning was configured". rclone's purge then
// lists object versions, which the store does not keep (501), and the purge
// fails. The store keeps no versions, so no bucket is ever versioned.
type unversionedBuckets struct {
	next    http.Handler
	backend gofakes3.Backend
}

var _ http.Handler = (*unversionedBuckets)(nil)

const neverVersioned = `<?xml version="1.0" encoding="UTF-8"?>
<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></VersioningConfiguration>`

func (u *unversionedBuckets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bucket, key, _ := objectOf(r)
	if r.Method != http.MethodGet || key != "" || bucket == "" || !r.URL.Query().Has("versioning") {
		u.next.ServeHTTP(w, r)
		return
	}
	if exists, err := u.backend.BucketExists(bucket); err != nil || !exists {
		u.next.ServeHTTP(w, r) // gofakes3's own answer: NoSuchBucket, or the error
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	_, _ = w.Write([]byte(neverVersioned))
}
