package probe

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// raceResult counts winners per round.
type raceResult struct {
	writers    int
	winners    []int
	maxWinners int
	err        error
}

func (r raceResult) String() string {
	counts := make([]string, len(r.winners))
	for i, w := range r.winners {
		counts[i] = fmt.Sprint(w)
	}
	return fmt.Sprintf("%d writers on 2 connection pools, winners per round [%s]", r.writers, strings.Join(counts, " "))
}

// attempt is one racing writer's request, on the client it is given.
type attempt func(ctx context.Context, c *s3.Client) outcome

// race runs s.rounds rounds; prepare builds each round's writers (its
// setup runs before the barrier), and every writer waits on the barrier
// so that all of them are released together.
func (s *store) race(ctx context.Context, prepare func(ctx context.Context, round int) ([]attempt, error)) raceResult {
	res := raceResult{writers: s.writers}
	for round := range s.rounds {
		attempts, err := prepare(ctx, round)
		if err != nil {
			res.err = fmt.Errorf("round %d: %w", round, err)
			return res
		}
		outcomes := make([]outcome, len(attempts))
		barrier := make(chan struct{})
		var wg sync.WaitGroup
		for i, a := range attempts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-barrier
				outcomes[i] = a(ctx, s.clients[i%len(s.clients)])
			}()
		}
		close(barrier)
		wg.Wait()
		winners := 0
		for _, o := range outcomes {
			switch {
			case o.err != nil:
				res.err = fmt.Errorf("round %d: %w", round, o.err)
				return res
			case o.status == 200:
				winners++
			}
		}
		res.winners = append(res.winners, winners)
		res.maxWinners = max(res.maxWinners, winners)
	}
	return res
}

func raceCreate(ctx context.Context, s *store) raceResult {
	return s.race(ctx, func(ctx context.Context, round int) ([]attempt, error) {
		key := s.key("race-create")
		attempts := make([]attempt, s.writers)
		for i := range attempts {
			attempts[i] = func(ctx context.Context, c *s3.Client) outcome {
				return s.put(ctx, c, key, fmt.Sprintf("writer %d", i), func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
			}
		}
		return attempts, nil
	})
}

func raceCAS(ctx context.Context, s *store) raceResult {
	return s.race(ctx, func(ctx context.Context, round int) ([]attempt, error) {
		key := s.key("race-cas")
		etag, err := s.seed(ctx, key, "version 0")
		if err != nil {
			return nil, err
		}
		attempts := make([]attempt, s.writers)
		for i := range attempts {
			attempts[i] = func(ctx context.Context, c *s3.Client) outcome {
				return s.put(ctx, c, key, fmt.Sprintf("writer %d", i), func(in *s3.PutObjectInput) { in.IfMatch = aws.String(etag) })
			}
		}
		return attempts, nil
	})
}

func raceComplete(ctx context.Context, s *store) raceResult {
	return s.race(ctx, func(ctx context.Context, round int) ([]attempt, error) {
		key := s.key("race-complete")
		attempts := make([]attempt, s.writers)
		for i := range attempts {
			in, err := s.startUpload(ctx, s.clients[i%len(s.clients)], key)
			if err != nil {
				return nil, err
			}
			in.IfNoneMatch = aws.String("*")
			attempts[i] = func(ctx context.Context, c *s3.Client) outcome { return s.complete(ctx, c, in) }
		}
		return attempts, nil
	})
}
