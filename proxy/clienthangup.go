package proxy

import (
	"context"
	"errors"
	"time"
)

// StatusClientClosedRequest is the status s3cond reports, in its access log
// and metrics, for a request whose client hung up before its answer was
// complete: nginx's 499. It is never sent (nobody is left to read it). A
// reader that fetches ranges speculatively and drops the ones it no longer
// needs makes many; an alert on 5xx must not page on them.
const StatusClientClosedRequest = 499

// ErrShuttingDown is the cause with which the server cancels the requests
// still running after the shutdown grace: they are s3cond's failures, not
// hang-ups of their clients.
var ErrShuttingDown = errors.New("s3cond is shutting down")

// hangUpNotice bounds how long a failed response copy waits for net/http to
// notice the client's hang-up. A write that fails on the spliced path does
// not cancel the request's context itself; net/http's background read of
// the same connection does, woken by the same reset.
const hangUpNotice = 100 * time.Millisecond

// cancelledByClient reports whether ctx, a request's context, ended because
// its client went away: net/http cancels it without a cause when the
// connection closes, the shutdown with ErrShuttingDown.
func cancelledByClient(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled) && context.Cause(ctx) == context.Canceled
}

// clientGoneDuringCopy reports whether a response body copy that failed did
// so because the client hung up, waiting at most hangUpNotice for net/http
// to say so.
func clientGoneDuringCopy(ctx context.Context) bool {
	if ctx.Err() == nil {
		timer := time.NewTimer(hangUpNotice)
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
		timer.Stop()
	}
	return cancelledByClient(ctx)
}

// reportedStatus is the status the access log and metrics give a request:
// the one sent, or StatusClientClosedRequest when the client hung up first,
// either mid-body or while s3cond still worked on its answer (the answer
// then is an error that names the cancellation as its cause).
func reportedStatus(ctx context.Context, i *requestInfo, sent int) int {
	if i.bodyCutByClient {
		return StatusClientClosedRequest
	}
	if sent >= 500 && i.err != nil && errors.Is(i.err.Cause, context.Canceled) && cancelledByClient(ctx) {
		return StatusClientClosedRequest
	}
	return sent
}
