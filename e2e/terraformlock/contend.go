package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// report is what one process saw; the test adds up the reports.
type report struct {
	Name     string
	Attempts int // lock attempts
	Rounds   int // state writes made while holding the lock
	// Serials are the state serials this process wrote: across processes
	// each must appear once, and the last must be the state's serial.
	Serials []int
	// LockHeld counts lock attempts refused with 412 PreconditionFailed,
	// LockHeldWithInfo those where the holder's LockInfo could be read.
	LockHeld, LockHeldWithInfo int
	// LockHeldMessage is one refusal as Terraform would print it.
	LockHeldMessage string
	// OtherLockErrors are lock attempts that failed otherwise (a 409
	// ConditionalRequestConflict, a 5xx after the SDK's retries).
	OtherLockErrors int
	// OwnStaleLocks counts lock files left by this process's own earlier
	// attempt (an attempt whose answer was lost, then retried by the SDK
	// into a 412), removed as `terraform force-unlock` would.
	OwnStaleLocks int
	// TwoHolders counts rounds where the O_EXCL oracle file already
	// existed: another process believed it held the lock at the same time.
	TwoHolders  int
	StateErrors int
	// StaleDigests counts state reads refused because the dynamodb_table's
	// digest item names another state (Terraform's "state data in S3 does
	// not have the expected content"): a process without the table wrote
	// the state since. Nothing is written in such a round.
	StaleDigests int
	// UnlockErrors: the lock file was gone or held another ID at unlock.
	UnlockErrors int
	Samples      []string
	Elapsed      string
}

func (r *report) sample(format string, args ...any) {
	if len(r.Samples) < 5 {
		r.Samples = append(r.Samples, fmt.Sprintf(format, args...))
	}
}

// contend runs lock rounds until o.rounds state writes are done or ctx ends.
func contend(ctx context.Context, b *backend, o options) *report {
	rep := &report{Name: o.name}
	started := time.Now()
	oracle := filepath.Join(o.oracleDir, "holder")
	for rep.Rounds < o.rounds && ctx.Err() == nil {
		rep.Attempts++
		id := fmt.Sprintf("%s-%d", o.name, rep.Attempts)
		info := lockInfo{ID: id, Operation: "OperationTypeApply", Who: o.name, Version: "1.13.0",
			Created: time.Now().UTC(), Path: b.bucket + "/" + b.stateKey}
		if lerr := b.lock(ctx, info); lerr != nil {
			refused(ctx, b, rep, lerr)
			pause(ctx)
			continue
		}
		held(ctx, b, rep, id, oracle)
	}
	rep.Elapsed = time.Since(started).Round(time.Millisecond).String()
	return rep
}

// refused accounts for a lock attempt that failed.
func refused(ctx context.Context, b *backend, rep *report, lerr *lockError) {
	err, holder, infoErr := lerr.err, lerr.holder, lerr.infoErr
	if !lockHeld(err) {
		rep.OtherLockErrors++
		rep.sample("lock: %v", err)
		return
	}
	rep.LockHeld++
	if holder == nil {
		// The holder unlocked between our PUT and our GET, as can happen
		// with Terraform too; it then prints the error without Lock Info.
		rep.sample("lock held, holder info unreadable: %v", infoErr)
		return
	}
	rep.LockHeldWithInfo++
	if rep.LockHeldMessage == "" {
		rep.LockHeldMessage = fmt.Sprintf("Error acquiring the state lock: %v\nLock Info:\n  ID: %s\n  Path: %s\n  Operation: %s\n  Who: %s",
			err, holder.ID, holder.Path, holder.Operation, holder.Who)
	}
	if strings.HasPrefix(holder.ID, rep.Name+"-") {
		rep.OwnStaleLocks++
		if uerr := b.unlock(ctx, holder.ID); uerr != nil {
			rep.sample("force-unlock own stale lock %s: %v", holder.ID, uerr)
		}
	}
}

// held runs one round under the lock: oracle file, state read and write,
// oracle removed, unlock.
func held(ctx context.Context, b *backend, rep *report, id, oracle string) {
	f, oerr := os.OpenFile(oracle, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if oerr != nil {
		rep.TwoHolders++
		rep.sample("lock %s acquired while another process held it (%v)", id, oerr)
	} else {
		f.Close()
	}
	if st, err := b.readState(ctx); errors.Is(err, errStaleDigest) {
		rep.StaleDigests++
		rep.sample("read state: %v", err)
	} else if err != nil {
		rep.StateErrors++
		rep.sample("read state: %v", err)
	} else {
		st.Serial++
		st.Lineage = id
		if err := b.writeState(ctx, st); err != nil {
			rep.StateErrors++
			rep.sample("write state: %v", err)
		} else {
			rep.Rounds++
			rep.Serials = append(rep.Serials, st.Serial)
		}
	}
	if oerr == nil {
		os.Remove(oracle)
	}
	if err := b.unlock(ctx, id); err != nil {
		rep.UnlockErrors++
		rep.sample("unlock %s: %v", id, err)
	}
}

// pause is a short random back-off after a refused lock (Terraform's
// -lock-timeout retries with a back-off too).
func pause(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(time.Duration(1+rand.IntN(10)) * time.Millisecond):
	}
}

// lockHeld: the lock file's create answered 412 PreconditionFailed, or the
// lock item's PutItem failed its condition.
func lockHeld(err error) bool {
	var conditionFailed *ddbtypes.ConditionalCheckFailedException
	return errors.As(err, &conditionFailed) || httpStatus(err) == 412 && errorCode(err) == "PreconditionFailed"
}

func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

func errorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}
