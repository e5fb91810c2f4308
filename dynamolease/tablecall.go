package dynamolease

import (
	"context"
	"sync/atomic"
	"time"
)

// tableCallGrace is how long a lease-table request in flight may go on
// once its caller stopped waiting: a store's round trip, with room.
const tableCallGrace = time.Second

// tableCall is the context of one lease-table request made on behalf of
// ctx: ctx's values, cancelled only tableCallGrace after ctx ends. A write
// cut off mid-flight may still land, leaving a row that nobody holds until
// it is settled or taken over, and a DynamoDB stand-in (dynalite) dies of a
// request aborted mid-body; so a caller that stops waiting (a client gone,
// an early lease abandoned) lets the request in flight finish and learns
// its outcome. A store that does not answer within the grace is cut off
// as before; the stores also bound each request themselves.
func tableCall(ctx context.Context) (context.Context, context.CancelFunc) {
	call, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var grace atomic.Pointer[time.Timer]
	stop := context.AfterFunc(ctx, func() { grace.Store(time.AfterFunc(tableCallGrace, cancel)) })
	return call, func() {
		if !stop() {
			if t := grace.Load(); t != nil {
				t.Stop()
			}
		}
		cancel()
	}
}
