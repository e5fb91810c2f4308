package probe

import "strings"

// Remedies: how s3cond can make a partial capability right with the
// store's own atomic check (Result.Remedy). A remedied capability is raced
// in its remedied form against every write it meets; Remedy is kept only
// when it won every race.
const (
	// RemedyIfMatch: the store checks the operation's ETag atomically but
	// ignores its other conditions (SeaweedFS 4.53's DeleteObject drops
	// x-amz-if-match-size and -last-modified-time): s3cond evaluates those
	// from a HEAD and sends If-Match: <the ETag read>.
	RemedyIfMatch = "reduce_to_if_match"
	// RemedyUnquoted: the store matches If-Match only against an unquoted
	// ETag (Ceph RGW 16.2.15's PutObject answers a quoted one, as every SDK
	// sends it, 412): s3cond sends the ETag unquoted.
	RemedyUnquoted = "unquoted_etag"
)

// remedyCases says, per capability with a remedy, which of its cases the
// remedy makes moot (failing) and which must pass for the remedy to hold.
var remedyCases = map[string]struct {
	remedy string
	moot   func(caseName string) bool
}{
	DeleteIfMatch: {RemedyIfMatch, func(name string) bool { return strings.HasPrefix(name, "x-amz-if-match-") }},
	PutIfMatch:    {RemedyUnquoted, func(name string) bool { return name == "quoted ETag that matches" }},
}

// remedyFor is the remedy for capability name whose sequential results
// failed only in the cases that remedy makes moot, or "".
func remedyFor(name string, results []caseResult) string {
	rc, ok := remedyCases[name]
	if !ok {
		return ""
	}
	mootFailed := false
	for _, r := range results {
		switch {
		case r.class == casePass:
		case rc.moot(r.name) && r.class != caseError:
			mootFailed = true
		default:
			return ""
		}
	}
	if !mootFailed {
		return ""
	}
	return rc.remedy
}
