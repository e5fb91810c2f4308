// Package etcdstore is the etcd lease store: a dynamolease.Table on an
// etcd v3 cluster that a fleet of s3cond processes shares without
// DynamoDB. A row is one key under a prefix (table.go), its value the
// generation then the row as JSON (row.go); each write is one Txn on it,
// and each row is attached to an etcd lease that outlives its TTL so etcd
// deletes dead rows by itself (leases.go). client.go makes the client
// (TLS, user and password, its auth token renewed in token.go).
package etcdstore
