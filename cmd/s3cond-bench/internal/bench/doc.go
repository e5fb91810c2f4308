// Package bench is the engine of cmd/s3cond-bench: S3 workloads (GET and
// PUT of any size, LIST, conditional creates and compare-and-swap), a
// runner that drives one with N workers for a duration or an operation count,
// and the reports (text, Markdown, JSON) that compare an endpoint behind
// s3cond with the same backend reached directly.
//
// Latencies are kept as every sample per worker and sorted at the end, which
// is exact and small enough at benchmark sizes (a million operations is 8 MB).
package bench
