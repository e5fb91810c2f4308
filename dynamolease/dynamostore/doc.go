// Package dynamostore is the DynamoDB lease store: a dynamolease.Table on
// a DynamoDB table (or moto, or dynalite) that a fleet of s3cond processes
// shares, its rows the schema of arrow-rs object_store's DynamoDB commit
// table (dynamolease's package documentation), keyed by bucket/key or, for
// arrow-rs clients of one bucket, by key alone (keyformat.go). A write is
// one conditional PutItem (a batch's, conditional Puts in TransactWriteItems,
// batch.go); reads are consistent. setup.go creates the
// table and its TTL and makes the client; the listing for `s3cond leases`
// and GET /leases is a Scan (list.go, listpage.go), the one call beyond the
// protocol's, so a lease table's IAM policy may leave it out.
package dynamostore
