// Package e2e holds s3cond's end-to-end tests: they start real processes
// (versitygw as the backend, s3cond in front of it, moto or dynalite for the
// shared lease table) and drive them with real S3 clients: aws-sdk-go-v2,
// minio-go, the AWS CLI, boto3 and the AWS SDK for JavaScript.
//
// S3COND_E2E_TARGET=direct points the clients straight at versitygw instead
// of at s3cond. That mode exists to check the tests themselves against a
// known-good S3 server (and as a baseline for benchmarks); tests of features
// only s3cond has (several keys, grants, leases, its embedded defaults) do
// not run in it, and rows where versitygw itself differs from Amazon S3 skip
// there, each naming the difference. In the default mode, which test.sh
// and CI run, two tests skip, by choice: TestProbeRcloneServeS3, the probe's
// rclone `serve s3` cell, and TestSeaweedFS, SeaweedFS's cell, run only with
// S3COND_PROBE_EXTRA_STORES=1 (scripts/probe-stores.sh), since building
// rclone or SeaweedFS takes longer than the rest of the suite's set-up
// (docs/stores.md, docs/testing.md). `go test -short` skips a
// test whose server or client program is not installed, naming it
// (testservers.Require); without -short that test fails instead.
package e2e
