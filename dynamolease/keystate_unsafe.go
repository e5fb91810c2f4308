//go:build s3cond_unsafe_trust_any_record

package dynamolease

// unsafeTrustAnyRecord, only in a build with the tag
// s3cond_unsafe_trust_any_record, trusts every recorded key state a row
// carries: one naming another version than the row's (where the key went,
// not where it is), and one on a row never released. It is the negative
// control of the recorded-state linearizability tests
// (e2e/linearizability, TestNegativeControlTrustingAnyRecord). Never ship
// a build with it.
const unsafeTrustAnyRecord = true
