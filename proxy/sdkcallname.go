package proxy

import (
	"maps"
	"net/url"
)

// sdkCallName is the query parameter AWS SDKs add to name the call
// (?x-id=GetObject). S3 routes by method and sub-resources and ignores it;
// a store that routed by it would run another operation than the one
// s3cond classified and authorised (?tagging&x-id=PutBucketReplication, a
// replication body checked as tags). Checking it against the classified
// operation would need the SDKs' names, which are not s3cond's for every
// call (x-id=ListBucketAnalyticsConfigurations is s3cond's
// GetBucketAnalyticsConfiguration without an id), so it is checked for
// its grammar and then not sent: the store classifies by what s3cond did.
const sdkCallName = "x-id"

// checkQueryWithoutCallName is checkQuery, with x-id checked but left out
// of the query sent on. Most SDK calls send x-id alone: their query is
// then checked without a copy of it.
func checkQueryWithoutCallName(q url.Values, kp KeyPolicy) (checkedQuery, error) {
	name, named := q[sdkCallName]
	if !named {
		return checkQuery(q, kp)
	}
	if err := checkCallName(name, kp); err != nil {
		return checkedQuery{}, err
	}
	if len(q) == 1 {
		return checkedQuery{}, nil
	}
	rest := maps.Clone(q)
	delete(rest, sdkCallName)
	return checkQuery(rest, kp)
}

// checkCallName is what checkQuery checks of x-id's values, without the
// map, the sorted names and the query string checkQuery would build for
// them only to have them dropped.
func checkCallName(values []string, kp KeyPolicy) error {
	if len(values) != 1 {
		return argumentError("The query parameter "+sdkCallName+" is given more than once", sdkCallName, values[0])
	}
	if g := grammarOf(sdkCallName); !g.valid(values[0], kp) {
		return g.refuse(sdkCallName, values[0])
	}
	return nil
}
