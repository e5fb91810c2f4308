// Package embedded runs s3cond's development S3 store: gofakes3 on its
// persistent bbolt backend, served over in-memory connections that only
// this process can open (Server.DialContext), so s3cond forwards to it
// exactly as it forwards to a real backend while nothing else can reach it.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3bolt"
	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// ObjectsFile is the store's file inside the data directory.
const ObjectsFile = "objects.db"

// openTimeout bounds the wait for bbolt's file lock: a second s3cond on the
// same data directory should fail at once with a clear error, not hang.
const openTimeout = time.Second

// Endpoint is the base URL s3cond addresses the store by. The name does
// not resolve (.invalid): requests reach the store only through
// Server.DialContext.
const Endpoint = "http://embedded-store.invalid"

// Server is a running embedded store.
type Server struct {
	db       *bolt.DB
	http     *http.Server
	listener *memListener
	served   chan error
}

// Start opens dataDir/objects.db (creating dataDir if needed) and serves
// gofakes3 on in-memory connections. Buckets are created on first use, so
// clients can upload without a CreateBucket first.
func Start(ctx context.Context, dataDir string, log zerolog.Logger) (*Server, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded store: create data dir: %w", err)
	}
	path := filepath.Join(dataDir, ObjectsFile)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: openTimeout})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("embedded store: %s is in use by another process", path)
		}
		return nil, fmt.Errorf("embedded store: open %s: %w", path, err)
	}
	backend := newObjectStore(s3bolt.New(db))
	faker := gofakes3.New(backend,
		gofakes3.WithAutoBucket(true),
		gofakes3.WithLogger(zerologAdapter{log: log.With().Str("component", "embedded-s3").Logger()}),
	)
	s := &Server{
		db: db,
		http: &http.Server{
			Handler:           storeHandler(faker, backend, log),
			ReadHeaderTimeout: 10 * time.Second,
		},
		listener: newMemListener(),
		served:   make(chan error, 1),
	}
	go func() { s.served <- s.http.Serve(s.listener) }()
	log.Debug().Str("file", path).Msg("embedded S3 store started (in-process, no listener)")
	return s, nil
}

// DialContext opens a connection to the store, for an http.Transport's
// DialContext; network and address are ignored.
func (s *Server) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return s.listener.Dial(ctx, network, addr)
}

// HTTPClient is a plain (unsigned) client of the store, for tests and
// tools inside this process; the store checks no signatures.
func (s *Server) HTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: s.DialContext, DisableCompression: true}}
}

// storeHandler is gofakes3 behind the corrections s3cond makes to it, each
// in its own file: multipart ETags that agree, uploads with a trailing
// checksum, UploadPartCopy, the ACL subresource, and GetBucketVersioning as
// S3 answers it for an unversioned bucket.
func storeHandler(faker *gofakes3.GoFakeS3, backend gofakes3.Backend, log zerolog.Logger) http.Handler {
	var h http.Handler = faker.Server()
	h = &unversionedBuckets{next: h, backend: backend}
	h = &privateACLs{next: h, backend: backend}
	h = &partCopies{next: h, backend: backend}
	h = &decodedTrailers{next: h}
	return newMultipartETags(h, backend, log)
}

// Close stops accepting requests, waits for running ones until ctx ends
// (then cuts them off), and closes the database so another Start on the same
// directory can open it.
func (s *Server) Close(ctx context.Context) error {
	shutdownErr := s.http.Shutdown(ctx)
	if shutdownErr != nil {
		_ = s.http.Close()
	}
	if err := <-s.served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		shutdownErr = errors.Join(shutdownErr, err)
	}
	if err := s.db.Close(); err != nil {
		return errors.Join(shutdownErr, fmt.Errorf("embedded store: close database: %w", err))
	}
	if shutdownErr != nil {
		return fmt.Errorf("embedded store: shutdown: %w", shutdownErr)
	}
	return nil
}

// zerologAdapter routes gofakes3's chatty per-request logging to debug. Its
// LogErr lines are internal errors such as a request body that stopped
// mid-way, which s3cond causes on purpose when it withholds the end of an
// unverified upload, so they are informational, not warnings.
type zerologAdapter struct {
	log zerolog.Logger
}

func (a zerologAdapter) Print(level gofakes3.LogLevel, v ...any) {
	event := a.log.Debug()
	if level == gofakes3.LogErr || level == gofakes3.LogWarn {
		event = a.log.Info()
	}
	event.Str("gofakes3_level", string(level)).Msg(strings.TrimSuffix(fmt.Sprintln(v...), "\n"))
}
