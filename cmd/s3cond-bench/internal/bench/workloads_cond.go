package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// condCreateWorkload puts fresh keys with If-None-Match: *, the "create only
// if absent" write. Every key is new, so every answer should be 200.
type condCreateWorkload struct{ size int64 }

func (condCreateWorkload) Name() string { return "cond-create" }

func (condCreateWorkload) Prepare(context.Context, *Target, int) error { return nil }

func (w condCreateWorkload) Do(ctx context.Context, t *Target, op Op) (Outcome, error) {
	key := fmt.Sprintf("%scond-create/w%d/%d", t.Prefix, op.Worker, op.Seq)
	err := putObject(ctx, t, key, seedFor(op), w.size, &putCondition{ifNoneMatch: "*"})
	if err != nil {
		return countConditionFailure(err), err
	}
	return Outcome{Bytes: w.size}, nil
}

// condCASWorkload is a read-modify-write without contention: each worker owns
// one key, reads its ETag with HEAD and replaces it with If-Match. It
// measures what the conditional path costs when nothing competes.
type condCASWorkload struct{ size int64 }

func (condCASWorkload) Name() string { return "cond-cas" }

func (condCASWorkload) key(t *Target, worker int) string {
	return fmt.Sprintf("%scond-cas/w%d", t.Prefix, worker)
}

func (w condCASWorkload) Prepare(ctx context.Context, t *Target, workers int) error {
	for i := range workers {
		if err := putObject(ctx, t, w.key(t, i), uint64(i), w.size, nil); err != nil {
			return fmt.Errorf("create %s: %w", w.key(t, i), err)
		}
	}
	return nil
}

func (w condCASWorkload) Do(ctx context.Context, t *Target, op Op) (Outcome, error) {
	key := w.key(t, op.Worker)
	etag, err := headETag(ctx, t, key)
	if err != nil {
		return Outcome{}, err
	}
	if err := putObject(ctx, t, key, seedFor(op), w.size, &putCondition{ifMatch: etag}); err != nil {
		// Nobody else writes this key: a 412 or 409 here is a wrong answer.
		return countConditionFailure(err), err
	}
	return Outcome{Bytes: w.size}, nil
}

// hotCASWorkload has every worker run a CAS retry loop on one key, the way
// clients that share a manifest or counter object do. One operation is one
// successful commit, however many attempts it took, so ops/s is commits/s and
// the latency is the time to commit; lost races are counted as 412s (the ETag
// moved) and 409s (a competing write held the key too long).
type hotCASWorkload struct{ size int64 }

func (hotCASWorkload) Name() string { return "hot-cas" }

func (hotCASWorkload) key(t *Target) string { return t.Prefix + "hot-cas/key" }

func (w hotCASWorkload) Prepare(ctx context.Context, t *Target, _ int) error {
	if err := putObject(ctx, t, w.key(t), 0, w.size, nil); err != nil {
		return fmt.Errorf("create %s: %w", w.key(t), err)
	}
	return nil
}

func (w hotCASWorkload) Do(ctx context.Context, t *Target, op Op) (Outcome, error) {
	var outcome Outcome
	for {
		select {
		case <-op.Stop:
			return outcome, errStopped
		default:
		}
		etag, err := headETag(ctx, t, w.key(t))
		if err != nil {
			return outcome, err
		}
		err = putObject(ctx, t, w.key(t), seedFor(op), w.size, &putCondition{ifMatch: etag})
		switch {
		case err == nil:
			outcome.Bytes = w.size
			return outcome, nil
		case isPreconditionFailed(err):
			outcome.PreconditionFailed++
		case isConflict(err):
			outcome.Conflicts++
		default:
			return outcome, err
		}
	}
}

func headETag(ctx context.Context, t *Target, key string) (string, error) {
	out, err := t.Client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(t.Bucket), Key: aws.String(key)})
	if err != nil {
		return "", fmt.Errorf("head %s: %w", key, err)
	}
	etag := aws.ToString(out.ETag)
	if etag == "" {
		return "", errors.New("head " + key + ": no ETag in the answer")
	}
	return etag, nil
}

// countConditionFailure records a 412 or 409 that a workload did not expect,
// so the report shows which of the two it was next to the error count.
func countConditionFailure(err error) Outcome {
	switch {
	case isPreconditionFailed(err):
		return Outcome{PreconditionFailed: 1}
	case isConflict(err):
		return Outcome{Conflicts: 1}
	}
	return Outcome{}
}
