package testservers

import "net/http"

// NamedStore is the store newStore makes, answering with the Server header
// server: it stands for a real store that names itself so (SeaweedFS sends
// "SeaweedFS 30GB 4.53", versitygw "VERSITYGW"), for what s3cond decides
// from a store's name (the known-racy table, docs/stores.md).
func NamedStore(server string, newStore func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(inner http.Handler) http.Handler {
		store := newStore(inner)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			store.ServeHTTP(&serverNaming{ResponseWriter: w, server: server}, r)
		})
	}
}

// serverNaming sets the Server header as the answer starts: gofakes3 sets
// its own ("AmazonS3") on the way.
type serverNaming struct {
	http.ResponseWriter
	server string
}

func (s *serverNaming) WriteHeader(status int) {
	s.Header().Set("Server", s.server)
	s.ResponseWriter.WriteHeader(status)
}

func (s *serverNaming) Write(b []byte) (int, error) {
	if s.Header().Get("Server") != s.server {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}
