package dynamolease_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/testservers"
)

// unreadableRow is a hand-written lease row whose numbers s3cond cannot use.
type unreadableRow struct {
	name                     string
	bolt, etcd               string
	dynamoGeneration, dynamo types.AttributeValue // generation and timeout; nil: absent
}

var unreadableRows = []unreadableRow{
	{name: "text generation",
		bolt: `{"generation":"abc","timeout":1000}`, etcd: "abc\n{\"timeout\":1000}",
		dynamoGeneration: &types.AttributeValueMemberS{Value: "abc"}, dynamo: &types.AttributeValueMemberN{Value: "1000"}},
	{name: "missing timeout",
		bolt: `{"generation":0}`, etcd: "00000000000000000000\n{}",
		dynamoGeneration: &types.AttributeValueMemberN{Value: "0"}},
	{name: "absurd timeout",
		bolt: `{"generation":0,"timeout":9000000000000000}`, etcd: "00000000000000000000\n{\"timeout\":9000000000000000}",
		dynamoGeneration: &types.AttributeValueMemberN{Value: "0"}, dynamo: &types.AttributeValueMemberN{Value: "9000000000000000"}},
	{name: "generation at the top of uint64",
		bolt: `{"generation":18446744073709551615,"timeout":1000}`, etcd: "18446744073709551615\n{\"timeout\":1000}",
		dynamoGeneration: &types.AttributeValueMemberN{Value: "18446744073709551615"}, dynamo: &types.AttributeValueMemberN{Value: "1000"}},
}

// An unreadable row is held for the reader's own timeout × skew, then taken
// over and rewritten readable: never "lease store unavailable" for good,
// never taken over at once (bolt, DynamoDB on moto, etcd 3.4).
func TestUnreadableRowsAreHeldForABoundedTime(t *testing.T) {
	write := map[string]func(t *testing.T, path string, row unreadableRow) dynamolease.Table{}
	write["bolt"] = func(t *testing.T, path string, row unreadableRow) dynamolease.Table {
		tbl := openBolt(t, filepath.Join(t.TempDir(), "leases.db"))
		if err := tbl.PutRawRow(path, "*", []byte(row.bolt)); err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	dynamo := dynamoClient(t, testservers.StartMoto(t))
	write["dynamodb"] = func(t *testing.T, path string, row unreadableRow) dynamolease.Table {
		tbl := newDynamoTable(t, dynamo)
		item := map[string]types.AttributeValue{"path": &types.AttributeValueMemberS{Value: path}, "etag": &types.AttributeValueMemberS{Value: "*"}}
		if row.dynamoGeneration != nil {
			item["generation"] = row.dynamoGeneration
		}
		if row.dynamo != nil {
			item["timeout"] = row.dynamo
		}
		if _, err := dynamo.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: item}); err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	cluster := testservers.StartEtcdClusterOf(t, 1)
	write["etcd"] = func(t *testing.T, path string, row unreadableRow) dynamolease.Table {
		tbl, client := etcdTable(t, cluster)
		if _, err := client.Put(t.Context(), tbl.Key(path, "*"), row.etcd); err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	for _, store := range []string{"bolt", "dynamodb", "etcd"} {
		for _, row := range unreadableRows {
			t.Run(store+"/"+row.name, func(t *testing.T) {
				tbl := write[store](t, "b/k", row)
				requireHeldThenTakenOver(t, tbl)
			})
		}
	}
}

func requireHeldThenTakenOver(t *testing.T, tbl dynamolease.Table) {
	t.Helper()
	opts := fastOptions()
	held := time.Duration(float64(opts.Timeout) * opts.MaxClockSkewRate)
	ctx := testContext(t, 20*time.Second)
	log := &syncWriter{w: &strings.Builder{}}
	c := dynamolease.NewCommitter(tbl, opts, zerolog.New(log))
	begun := time.Now()
	lease, err := c.Acquire(ctx, "b/k", "*", nil)
	if err != nil {
		t.Fatalf("Acquire on the unreadable row: %v", err)
	}
	if waited := time.Since(begun); waited < held {
		t.Errorf("took the unreadable row over after %v, before the %v it counts as held", waited, held)
	}
	row, err := tbl.Get(ctx, "b/k", "*")
	if err != nil || row == nil || row.Unreadable != "" || row.Generation != lease.Generation() {
		t.Fatalf("row after the takeover: %+v, %v; want it readable at generation %d", row, err, lease.Generation())
	}
	if err := lease.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log.String(), "lease row is unreadable"); n != 1 {
		t.Errorf("logged the unreadable row %d times, want once:\n%s", n, log.String())
	}
}

// syncWriter lets the Committer's goroutines log into one builder.
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}
