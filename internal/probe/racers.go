package probe

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// raceRound is the key one round races on and, for writers conditioned on
// a version, the ETag of the version the round seeded; sources is the
// stem of the race's copy source keys (one per writer).
type raceRound struct{ key, etag, sources string }

// attempt is one racing writer's request, bound to its connection pool.
type attempt func(ctx context.Context) outcome

// racer is one kind of writer a race releases.
type racer struct {
	// slug names the racer in race keys: race-<subject>-vs-<opponent>-N
	// (test fakes that stand for racy stores force their interleaving on
	// the keys of the race they lose).
	slug string
	// name names it in evidence.
	name string
	// capability is the verdict a race this racer is the subject of decides.
	capability string
	// onVersion: it conditions on the version the round seeds (If-Match);
	// otherwise the round's key is missing and it creates (If-None-Match: *).
	onVersion bool
	// removes: a winner leaves the key deleted.
	removes bool
	// prepare does the writer's set-up (a copy source, an upload) before
	// the race is released, and returns its request.
	prepare func(ctx context.Context, s *store, rd raceRound, writer int, c *s3.Client) (attempt, error)
}

// writerBody is distinct per writer and round, so every winner leaves an
// ETag no other writer (and no seeded version) has.
func writerBody(rd raceRound, writer int) string {
	return fmt.Sprintf("writer %d of %s", writer, rd.key)
}

// putRacer's remedy is put_if_match's (RemedyUnquoted: its If-Match is
// sent unquoted, as s3cond would send it).
func putRacer(onVersion bool, remedy string) racer {
	r := racer{slug: "put-create", name: "PutObject If-None-Match: *", capability: PutIfNoneMatch}
	if onVersion {
		r = racer{slug: "put-cas", name: "PutObject If-Match", capability: PutIfMatch, onVersion: true}
	}
	r.prepare = func(_ context.Context, s *store, rd raceRound, writer int, c *s3.Client) (attempt, error) {
		if remedy == RemedyUnquoted {
			rd.etag = unquoted(rd.etag)
		}
		return func(ctx context.Context) outcome {
			return s.put(ctx, c, rd.key, writerBody(rd, writer), func(in *s3.PutObjectInput) { in.IfNoneMatch, in.IfMatch = condition(rd, onVersion) })
		}, nil
	}
	return r
}

// condition is (If-None-Match, If-Match) for a create or for a CAS on rd's version.
func condition(rd raceRound, onVersion bool) (*string, *string) {
	if onVersion {
		return nil, aws.String(rd.etag)
	}
	return aws.String("*"), nil
}

func copyRacer(onVersion bool) racer {
	r := racer{slug: "copy-create", name: "CopyObject If-None-Match: *", capability: CopyIfNoneMatch}
	if onVersion {
		r = racer{slug: "copy-cas", name: "CopyObject If-Match", capability: CopyIfMatch, onVersion: true}
	}
	r.prepare = func(ctx context.Context, s *store, rd raceRound, writer int, c *s3.Client) (attempt, error) {
		// "source-", never "race-": a fake forces races on race keys only.
		// Written again each round, with this round's body.
		src := fmt.Sprintf("%s-%d", rd.sources, writer)
		if _, err := s.seed(ctx, src, writerBody(rd, writer)); err != nil {
			return nil, err
		}
		return func(ctx context.Context) outcome {
			return s.copyTo(ctx, c, src, rd.key, func(in *s3.CopyObjectInput) { in.IfNoneMatch, in.IfMatch = condition(rd, onVersion) })
		}, nil
	}
	return r
}

func completeRacer(onVersion bool) racer {
	r := racer{slug: "complete-create", name: "CompleteMultipartUpload If-None-Match: *", capability: CompleteIfNoneMatch}
	if onVersion {
		r = racer{slug: "complete-cas", name: "CompleteMultipartUpload If-Match", capability: CompleteIfMatch, onVersion: true}
	}
	r.prepare = func(ctx context.Context, s *store, rd raceRound, writer int, c *s3.Client) (attempt, error) {
		in, err := s.startUpload(ctx, c, rd.key, writerBody(rd, writer))
		if err != nil {
			return nil, err
		}
		in.IfNoneMatch, in.IfMatch = condition(rd, onVersion)
		return func(ctx context.Context) outcome { return s.complete(ctx, c, in) }, nil
	}
	return r
}

func deleteRacer() racer {
	return racer{slug: "delete-cas", name: "DeleteObject If-Match", capability: DeleteIfMatch, onVersion: true, removes: true,
		prepare: func(_ context.Context, s *store, rd raceRound, _ int, c *s3.Client) (attempt, error) {
			return func(ctx context.Context) outcome {
				return s.deleteObject(ctx, c, rd.key, func(in *s3.DeleteObjectInput) { in.IfMatch = aws.String(rd.etag) })
			}, nil
		}}
}

func deleteEntryRacer() racer {
	return racer{slug: "deletes-cas", name: "DeleteObjects entry ETag", capability: DeleteObjectsETag, onVersion: true, removes: true,
		prepare: func(_ context.Context, s *store, rd raceRound, _ int, c *s3.Client) (attempt, error) {
			return func(ctx context.Context) outcome { return s.deleteEntry(ctx, c, rd.key, rd.etag) }, nil
		}}
}
