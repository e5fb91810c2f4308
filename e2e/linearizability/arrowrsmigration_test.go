package linearizability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/dynamolease/dynamostore"
	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/arrowrs"
	"github.com/s3cond/s3cond/internal/testservers"
)

// The recipe of docs/recipes/arrow-rs-migration.md, played: arrow-rs
// object_store ≤ 0.12 writers committing with DynamoCommit (a lock row per
// path in a DynamoDB table, then an unconditional PUT straight to the
// store) and writers already sending If-None-Match: * through s3cond
// commit the versions of one log, as Delta, Lance or Iceberg-on-object-store
// writers do: version v is the object migrationKey(v), and its writer won
// the commit iff its create succeeded.

// migrationRacers is how many writers of each kind race for every version.
const migrationRacers = 3

func migrationKey(version int) string { return fmt.Sprintf("_delta_log/%020d.json", version) }

// commitLedger records who believes they committed each version.
type commitLedger struct {
	mu      sync.Mutex
	winners map[int][]string
}

func newCommitLedger() *commitLedger { return &commitLedger{winners: map[int][]string{}} }

func (l *commitLedger) won(version int, writer string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.winners[version] = append(l.winners[version], writer)
}

// record is one writer's outcome for version v.
func (l *commitLedger) record(t *testing.T, v int, writer string, won bool, err error) {
	if err != nil {
		t.Errorf("%s, version %d: %v", writer, v, err)
	}
	if won {
		l.won(v, writer)
	}
}

// doubleWins lists the versions more than one writer believes it committed.
func (l *commitLedger) doubleWins() map[int][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	doubles := map[int][]string{}
	for v, w := range l.winners {
		if len(w) > 1 {
			doubles[v] = slices.Clone(w)
		}
	}
	return doubles
}

// winsByKind counts the versions in [from, to) each kind of writer won
// (by its name's prefix).
func (l *commitLedger) winsByKind(from, to int) map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	wins := map[string]int{}
	for v := from; v < to; v++ {
		for _, w := range l.winners[v] {
			kind, _, _ := strings.Cut(w, "-")
			wins[kind]++
		}
	}
	return wins
}

// requireOneWinnerEach: every version in [from, to) has exactly one
// writer that believes it committed, and the store holds that writer's
// bytes.
func (l *commitLedger) requireOneWinnerEach(t *testing.T, c *Cluster, from, to int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for v := from; v < to; v++ {
		winners := l.winners[v]
		if len(winners) != 1 {
			t.Errorf("version %d: %d writers believe they committed it (%q); want exactly one", v, len(winners), winners)
			continue
		}
		if stored, _ := backendValue(t, c, migrationKey(v)); stored != winners[0] {
			t.Errorf("version %d: %s committed it, the store holds %q's bytes", v, winners[0], stored)
		}
	}
}

// legacyArrowRSWriter is an arrow-rs writer not yet moved: DynamoCommit on
// the shared table, then HEAD and PUT with store (straight to the store
// with its key, or through s3cond).
type legacyArrowRSWriter struct {
	name   string
	commit arrowrs.Commit
	store  *s3.Client
	bucket string
}

func newLegacyArrowRSWriters(t *testing.T, c *Cluster, table string) []legacyArrowRSWriter {
	t.Helper()
	ddb, err := dynamostore.NewClient(t.Context(), e2e.Region, c.Moto.Endpoint,
		credentials.NewStaticCredentialsProvider("testing", "testing", ""))
	if err != nil {
		t.Fatal(err)
	}
	var writers []legacyArrowRSWriter
	for i := range migrationRacers {
		store := e2e.NewS3Client(c.Store.Endpoint, c.Store.Cred, nil)
		if i == migrationRacers-1 {
			// One already points at s3cond (the recipe's first step), still
			// committing with DynamoCommit: its PUT is unconditional, and
			// s3cond forwards it without a lease.
			store = c.Client(0, 20*time.Second)
		}
		writers = append(writers, legacyArrowRSWriter{name: fmt.Sprintf("arrow-rs-%d", i), commit: arrowrs.New(ddb, table),
			store: store, bucket: c.Bucket})
	}
	return writers
}

func (w legacyArrowRSWriter) head(ctx context.Context, key string) (string, bool, error) {
	out, err := w.store.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(w.bucket), Key: aws.String(key)})
	if e2e.HTTPStatus(err) == http.StatusNotFound {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return aws.ToString(out.ETag), true, nil
}

// create commits version v as PutMode::Create does; beforePut, if set,
// runs under the lock, after the precondition held, before the PUT.
func (w legacyArrowRSWriter) create(ctx context.Context, v int, beforePut func()) (won bool, err error) {
	err = w.commit.ConditionalOp(ctx, arrowrs.Options{}, w.head, migrationKey(v), "", func(ctx context.Context) error {
		if beforePut != nil {
			beforePut()
		}
		_, err := w.store.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(w.bucket), Key: aws.String(migrationKey(v)),
			Body: bytes.NewReader(Body(w.name, 256))})
		return err
	})
	if errors.Is(err, arrowrs.ErrAlreadyExists) {
		return false, nil
	}
	return err == nil, err
}

// movedWriter is a writer already moved to native conditional put: PUT
// If-None-Match: * through s3cond.
type movedWriter struct {
	name   string
	client *s3.Client
	bucket string
}

func newMovedWriters(c *Cluster) []movedWriter {
	var writers []movedWriter
	for i := range migrationRacers {
		writers = append(writers, movedWriter{name: fmt.Sprintf("s3cond-%d", i), client: c.Client(i, 20*time.Second), bucket: c.Bucket})
	}
	return writers
}

// try is one conditional create: won, lost (412), or busy (409
// ConditionalRequestConflict: another writer still holds the key; object
// stores' clients retry it).
func (w movedWriter) try(ctx context.Context, v int) (won, busy bool, err error) {
	_, err = w.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(w.bucket), Key: aws.String(migrationKey(v)),
		Body: bytes.NewReader(Body(w.name, 256)), IfNoneMatch: aws.String("*")})
	switch e2e.HTTPStatus(err) {
	case 0:
		return err == nil, false, err
	case http.StatusPreconditionFailed:
		return false, false, nil
	case http.StatusConflict:
		return false, true, nil
	}
	return false, false, err
}

// create retries try while the key is busy.
func (w movedWriter) create(ctx context.Context, v int) (bool, error) {
	for ctx.Err() == nil {
		won, busy, err := w.try(ctx, v)
		if !busy {
			return won, err
		}
	}
	return false, ctx.Err()
}

// forceWindow plays the interleaving DynamoCommit is exposed to: an
// arrow-rs writer has locked version v and seen it absent, and a moved
// writer's create arrives before its PUT. It returns the moved writer's
// status then: with the table shared it cannot be 200.
func forceWindow(t *testing.T, ctx context.Context, ledger *commitLedger, legacy legacyArrowRSWriter, moved movedWriter, v int) {
	t.Helper()
	var movedStatus int
	won, err := legacy.create(ctx, v, func() {
		ok, busy, err := moved.try(ctx, v)
		switch {
		case err != nil:
			t.Errorf("%s's create inside %s's window: %v", moved.name, legacy.name, err)
		case ok:
			movedStatus = http.StatusOK
			ledger.won(v, moved.name)
		case busy:
			movedStatus = http.StatusConflict
		default:
			movedStatus = http.StatusPreconditionFailed
		}
	})
	if err != nil {
		t.Fatalf("%s's commit of version %d: %v", legacy.name, v, err)
	}
	if won {
		ledger.won(v, legacy.name)
	}
	if movedStatus != http.StatusOK {
		// The moved writer retries its 409, as its client would.
		if won, err := moved.create(ctx, v); err != nil || won {
			t.Errorf("%s's retry after %s committed version %d: won %v, %v", moved.name, legacy.name, v, won, err)
		}
	}
	t.Logf("version %d: %s's create inside %s's lock window answered %d", v, moved.name, legacy.name, movedStatus)
}

// raceVersions has every writer try to commit each version in [from, to):
// a round per version, all writers let go at once, as committers that read
// the same last version all try the next.
func raceVersions(t *testing.T, ctx context.Context, ledger *commitLedger, legacy []legacyArrowRSWriter, moved []movedWriter, from, to int) {
	t.Helper()
	for v := from; v < to; v++ {
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for _, w := range legacy {
			wg.Go(func() {
				<-gate
				won, err := w.create(ctx, v, nil)
				ledger.record(t, v, w.name, won, err)
			})
		}
		for _, w := range moved {
			wg.Go(func() {
				<-gate
				won, err := w.create(ctx, v)
				ledger.record(t, v, w.name, won, err)
			})
		}
		close(gate)
		wg.Wait()
	}
}

// migrationCluster is s3cond in front of versitygw with its lease table on
// moto. shared: the table the arrow-rs writers lock in, key_format arrow-rs
// (the recipe). Otherwise s3cond keeps its leases in its embedded store and
// the arrow-rs writers lock in a table of their own (the control).
func migrationCluster(t *testing.T, shared bool) (c *Cluster, arrowTable string) {
	t.Helper()
	if shared {
		c = NewCluster(t, ClusterOptions{DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable(),
			Env: []string{"S3COND_LEASE_DYNAMODB_KEY_FORMAT=arrow-rs", "S3COND_LEASE_DYNAMODB_BUCKET=" + testBucket}})
		return c, c.Config.Lease.DynamoDB.Table
	}
	// The arrow-rs writers' table is created by `s3cond table create` (the
	// same schema): a throwaway cluster config names it on the shared moto.
	c = NewCluster(t, ClusterOptions{})
	c.Moto, arrowTable = sharedMoto(t), uniqueTable()
	tableOnly := *c
	tableOnly.Config.Lease.Store = "dynamodb"
	tableOnly.Config.Lease.DynamoDB = e2e.DynamoDBConfig{Table: arrowTable, Region: e2e.Region, Endpoint: c.Moto.Endpoint,
		Credentials: e2e.CredentialsConfig{Source: "static", AccessKeyID: "testing", SecretAccessKey: "testing"}}
	tableOnly.CreateLeaseTable(t)
	return c, arrowTable
}

// playMixedPhase: the forced window on version 0, then both kinds of
// writers racing for versions 1 to 9.
func playMixedPhase(t *testing.T, c *Cluster, arrowTable string) *commitLedger {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	legacy, moved := newLegacyArrowRSWriters(t, c, arrowTable), newMovedWriters(c)
	ledger := newCommitLedger()
	forceWindow(t, ctx, ledger, legacy[0], moved[0], 0)
	raceVersions(t, ctx, ledger, legacy, moved, 1, 10)
	return ledger
}

// raceUpdatesDuringTheMove: both kinds of writers race five rounds of
// compare-and-swap on one object.
func raceUpdatesDuringTheMove(t *testing.T, c *Cluster, arrowTable string) [][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	return raceUpdates(t, ctx, c, newLegacyArrowRSWriters(t, c, arrowTable), newMovedWriters(c), 5)
}

// TestArrowRSMigrationOneWinnerPerVersion: during the move (arrow-rs
// DynamoCommit writers and If-None-Match writers through s3cond sharing
// the table) no version has two winners, even when a native create falls
// into an arrow-rs writer's window between its lock and its PUT; once the
// arrow-rs writers are retired the moved writers go on alone on the
// table, and then on another lease store after every s3cond has been
// stopped.
func TestArrowRSMigrationOneWinnerPerVersion(t *testing.T) {
	t.Parallel()
	c, table := migrationCluster(t, true)
	ledger := playMixedPhase(t, c, table)
	ledger.requireOneWinnerEach(t, c, 0, 10)
	wins := ledger.winsByKind(0, 10)
	t.Logf("versions won during the move: %v", wins)
	if wins["arrow"] == 0 || wins["s3cond"] == 0 {
		t.Errorf("versions won during the move: %v; want both kinds of writer among the winners", wins)
	}
	updates := raceUpdatesDuringTheMove(t, c, table)
	requireOneUpdateWinnerEach(t, c, updates)
	t.Logf("update rounds won during the move: %q", updates)

	// The arrow-rs writers are retired: the table stays.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	raceVersions(t, ctx, ledger, nil, newMovedWriters(c), 10, 15)
	ledger.requireOneWinnerEach(t, c, 10, 15)

	// The table goes: every s3cond on it stopped (Stop waits for the exit;
	// no write is in flight), each starts again on its own store.
	moveOffTheTable(t, c)
	raceVersions(t, ctx, ledger, nil, newMovedWriters(c), 15, 20)
	ledger.requireOneWinnerEach(t, c, 15, 20)
}

// moveOffTheTable restarts the cluster's one s3cond on its embedded lease
// store.
func moveOffTheTable(t *testing.T, c *Cluster) {
	t.Helper()
	if len(c.Proxies) != 1 {
		t.Fatalf("moveOffTheTable restarts one s3cond; the cluster has %d", len(c.Proxies))
	}
	c.Proxies[0].Process.Stop()
	c.Config.Lease.Store, c.Config.Lease.DynamoDB = "embedded", e2e.DynamoDBConfig{}
	c.env = slices.DeleteFunc(c.env, func(kv string) bool { return strings.HasPrefix(kv, "S3COND_LEASE_DYNAMODB_") })
	c.DataDirs, c.AdminAddrs = nil, nil
	c.Proxies = []*testservers.S3cond{c.startProxy(t, 0, "")}
}

// TestNegativeControlArrowRSMigrationWithoutTheSharedTable: the same with
// s3cond keeping its leases elsewhere. The native create in the arrow-rs
// writer's window wins, and so does the arrow-rs PUT after it.
func TestNegativeControlArrowRSMigrationWithoutTheSharedTable(t *testing.T) {
	t.Parallel()
	c, table := migrationCluster(t, false)
	doubles := playMixedPhase(t, c, table).doubleWins()
	t.Logf("versions with two winners: %v", doubles)
	if len(doubles[0]) != 2 {
		t.Fatalf("version 0 winners %q: the native create inside the arrow-rs window did not win beside it; the control measured nothing", doubles[0])
	}
	if len(doubles) < 2 {
		t.Fatalf("no raced version had two winners: the race measured nothing")
	}
	updates := raceUpdatesDuringTheMove(t, c, table)
	t.Logf("update rounds won: %q", updates)
	if !slices.ContainsFunc(updates, func(w []string) bool { return len(w) > 1 }) {
		t.Fatalf("no update round had two winners: the update race measured nothing")
	}
}

// TestArrowRSWriterThroughS3condUnderCreateOnlyBlocksItself: the recipe's
// warning. A DynamoCommit writer sending its PUT through s3cond while its
// bucket is create_only (or in strict mode) has its unconditional PUT
// leased by s3cond on the very row it holds itself: the PUT waits out
// s3cond's wait budget and answers 409, and the commit fails.
func TestArrowRSWriterThroughS3condUnderCreateOnlyBlocksItself(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable(),
		Env: []string{"S3COND_LEASE_DYNAMODB_KEY_FORMAT=arrow-rs", "S3COND_LEASE_DYNAMODB_BUCKET=" + testBucket,
			"S3COND_CREATE_ONLY=" + testBucket}})
	legacy := newLegacyArrowRSWriters(t, c, c.Config.Lease.DynamoDB.Table)
	throughS3cond := legacy[len(legacy)-1]
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	won, err := throughS3cond.create(ctx, 0, nil)
	if won || e2e.HTTPStatus(err) != http.StatusConflict {
		t.Fatalf("a DynamoCommit writer through s3cond on a create_only bucket: won %v, %v; want its PUT refused with 409", won, err)
	}
	requireBackendValue(t, c, migrationKey(0), "")
	t.Logf("as expected: %v", err)
}
