package linearizability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/arrowrs"
)

// The migration's updates: PutMode::Update through DynamoCommit (the row
// is (key, the ETag HEAD reported)) against If-Match through s3cond (the
// lease of the version being replaced), compare-and-swaps of one object.

const updatedKey = "_delta_log/_latest.json"

// updateBody is what writer writes in round r: bodies differ per round, or
// a writer replacing its own bytes would leave the ETag as it was and a
// second If-Match on it would rightly succeed.
func updateBody(writer string, r int) []byte { return Body(fmt.Sprintf("%s@%d", writer, r), 256) }

// update is PutMode::Update on etag.
func (w legacyArrowRSWriter) update(ctx context.Context, etag string, r int) (bool, error) {
	err := w.commit.ConditionalOp(ctx, arrowrs.Options{}, w.head, updatedKey, etag, func(ctx context.Context) error {
		_, err := w.store.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(w.bucket), Key: aws.String(updatedKey),
			Body: bytes.NewReader(updateBody(w.name, r))})
		return err
	})
	if errors.Is(err, arrowrs.ErrPrecondition) {
		return false, nil
	}
	return err == nil, err
}

// update is PutObject If-Match: etag, retried while the key is busy (409).
func (w movedWriter) update(ctx context.Context, etag string, r int) (bool, error) {
	for ctx.Err() == nil {
		_, err := w.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(w.bucket), Key: aws.String(updatedKey),
			Body: bytes.NewReader(updateBody(w.name, r)), IfMatch: aws.String(etag)})
		switch e2e.HTTPStatus(err) {
		case 0:
			return err == nil, err
		case http.StatusPreconditionFailed:
			return false, nil
		case http.StatusConflict:
			continue
		}
		return false, err
	}
	return false, ctx.Err()
}

// raceUpdates plays rounds of compare-and-swap: each round every writer
// tries to replace the version all of them read, let go at once. It
// returns who believes it won each round.
func raceUpdates(t *testing.T, ctx context.Context, c *Cluster, legacy []legacyArrowRSWriter, moved []movedWriter, rounds int) [][]string {
	t.Helper()
	store := e2e.NewS3Client(c.Store.Endpoint, c.Store.Cred, nil)
	if _, err := store.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(c.Bucket), Key: aws.String(updatedKey),
		Body: bytes.NewReader(Body("seed", 256))}); err != nil {
		t.Fatal(err)
	}
	winners := make([][]string, rounds)
	for r := range rounds {
		head, err := store.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(c.Bucket), Key: aws.String(updatedKey)})
		if err != nil {
			t.Fatal(err)
		}
		etag := aws.ToString(head.ETag)
		var mu sync.Mutex
		var wg sync.WaitGroup
		gate := make(chan struct{})
		outcome := func(name string, won bool, err error) {
			if err != nil {
				t.Errorf("%s, update round %d: %v", name, r, err)
			}
			if won {
				mu.Lock()
				winners[r] = append(winners[r], name)
				mu.Unlock()
			}
		}
		for _, w := range legacy {
			wg.Go(func() { <-gate; won, err := w.update(ctx, etag, r); outcome(w.name, won, err) })
		}
		for _, w := range moved {
			wg.Go(func() { <-gate; won, err := w.update(ctx, etag, r); outcome(w.name, won, err) })
		}
		close(gate)
		wg.Wait()
	}
	return winners
}

// requireOneUpdateWinnerEach: one winner per round, and the object holds
// the last round's winner's bytes.
func requireOneUpdateWinnerEach(t *testing.T, c *Cluster, winners [][]string) {
	t.Helper()
	for r, w := range winners {
		if len(w) != 1 {
			t.Errorf("update round %d: %d writers believe they replaced the version (%q); want exactly one", r, len(w), w)
		}
	}
	r := len(winners) - 1
	if stored, _ := backendValue(t, c, updatedKey); len(winners[r]) == 1 && stored != fmt.Sprintf("%s@%d", winners[r][0], r) {
		t.Errorf("%s replaced the last version, the store holds %q", winners[r][0], stored)
	}
}
