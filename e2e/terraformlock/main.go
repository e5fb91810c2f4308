// Command terraformlock replays what the S3 state backend of Terraform and
// OpenTofu sends with use_lockfile = true (S3-native state locking), in a
// loop, so that several processes contend for one state's lock the way
// several `terraform apply` runs do. The e2e tests (e2e/workloads_terraform_test.go)
// build it and run two or three at once, through s3cond and straight
// against a store without conditional writes.
//
// One round, as internal/backend/remote-state/s3/client.go does it
// (hashicorp/terraform; OpenTofu's is the same apart from where noted):
//   - lock: PutObject <state>.tflock with If-None-Match: *, a JSON LockInfo
//     body, Content-Type application/json and a SHA-256 checksum, through
//     the SDK's upload manager (OpenTofu: PutObject itself, with the SHA-256
//     precomputed). On failure: GetObject of the lock file for the holder's
//     LockInfo, and the error is the lock error;
//   - state read: HeadObject, then GetObject through the download manager;
//   - state write: PutObject of the state, SHA-256 checksum, upload manager;
//   - unlock: GetObject of the lock file, compare its ID with ours, then an
//     unconditional DeleteObject.
//
// With -lock dynamodb (dynamodb_table alone, every release) the lock is an
// item instead: PutItem LockID = <bucket>/<key>, Info = the LockInfo JSON,
// on condition attribute_not_exists(LockID); refused, a consistent GetItem
// of its Info; unlock: GetItem, compare the ID, DeleteItem. The table also
// holds the state's MD5 in the item <bucket>/<key>-md5 (Digest, hex),
// written after every state write; a state read whose MD5 differs is read
// again every 2 s for 10 s, then refused ("state data in S3 does not have
// the expected content"). With -lock both (use_lockfile and dynamodb_table
// together: Terraform and OpenTofu ≥ 1.10) the file is taken first,
// then the item; if the item is refused the file is unlocked again. Unlock
// releases both.
//
// While it believes it holds the lock the process holds an independent
// oracle too: a file created with O_EXCL in a directory all processes
// share, removed before unlocking. Failing to create it means two holders.
// The state is JSON whose serial counts the writes; every serial a process
// wrote is reported, so the test can find lost writes. It prints one JSON
// report on stdout.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"
)

// options are the command-line flags.
type options struct {
	endpoint, bucket, stateKey string
	caFile                     string
	oracleDir                  string
	name                       string
	rounds                     int
	deadline                   time.Duration
	// lock is file (use_lockfile), dynamodb (dynamodb_table) or both.
	lock                         string
	dynamoDBEndpoint, table      string
	consistency, consistencyPoll time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.endpoint, "endpoint", "", "S3 endpoint (endpoints.s3 in the backend block)")
	flag.StringVar(&o.bucket, "bucket", "", "state bucket")
	flag.StringVar(&o.stateKey, "key", "terraform.tfstate", "state key; the lock is <key>.tflock")
	flag.StringVar(&o.caFile, "ca", "", "PEM certificate to trust, for an https endpoint")
	flag.StringVar(&o.oracleDir, "oracle", "", "directory for the O_EXCL holder file, shared by all processes")
	flag.StringVar(&o.name, "name", "replay", "this process's name in lock info and reports")
	flag.IntVar(&o.rounds, "rounds", 20, "state writes to make under the lock")
	flag.DurationVar(&o.deadline, "deadline", 60*time.Second, "give up after this long")
	flag.StringVar(&o.lock, "lock", "file", "file (use_lockfile), dynamodb (dynamodb_table) or both")
	flag.StringVar(&o.dynamoDBEndpoint, "dynamodb-endpoint", "", "DynamoDB endpoint (endpoints.dynamodb), with -lock dynamodb or both")
	flag.StringVar(&o.table, "table", "", "dynamodb_table, with -lock dynamodb or both")
	flag.DurationVar(&o.consistency, "consistency-timeout", 10*time.Second, "how long a state read not matching the digest is retried (Terraform: 10s)")
	flag.DurationVar(&o.consistencyPoll, "consistency-poll", 2*time.Second, "how often it is retried (Terraform: 2s)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "terraformlock:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.endpoint == "" || o.bucket == "" || o.oracleDir == "" {
		return errors.New("-endpoint, -bucket and -oracle are required")
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.deadline)
	defer cancel()
	client, err := newS3Client(ctx, o.endpoint, o.caFile)
	if err != nil {
		return err
	}
	b := &backend{s3: client, bucket: o.bucket, stateKey: o.stateKey, lockKey: o.stateKey + ".tflock", who: o.name,
		useLockfile: o.lock == "file" || o.lock == "both", consistency: o.consistency, consistencyPoll: o.consistencyPoll}
	switch o.lock {
	case "file":
	case "dynamodb", "both":
		if o.dynamoDBEndpoint == "" || o.table == "" {
			return errors.New("-lock dynamodb and both need -dynamodb-endpoint and -table")
		}
		if b.ddb, err = newDynamoDBClient(ctx, o.dynamoDBEndpoint); err != nil {
			return err
		}
		b.table = o.table
	default:
		return fmt.Errorf("-lock %q: want file, dynamodb or both", o.lock)
	}
	rep := contend(ctx, b, o)
	return json.NewEncoder(os.Stdout).Encode(rep)
}
