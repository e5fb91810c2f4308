package testservers

import "net/http"

// NewCopyConditionsIgnoredStore stands for versitygw v1.8.0: PutObject's
// and CompleteMultipartUpload's If-Match / If-None-Match are checked
// atomically with the write, while a CopyObject's destination conditions
// are ignored (the copy overwrites whatever is there). Every other write
// condition is atomic, as on NewAtomicStore.
func NewCopyConditionsIgnoredStore(inner http.Handler) http.Handler {
	return &conditionalStore{inner: inner, keys: map[string]*keyHistory{}, ignored: opCopy}
}
