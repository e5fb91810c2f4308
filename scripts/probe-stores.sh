#!/usr/bin/env bash
# The testbed's opt-in stores (docs/stores.md, docs/testing.md): builds
# rclone v1.76 for its `serve s3` and SeaweedFS 4.53's weed (many minutes
# each on a fresh machine; cached after) and runs their e2e cells (the
# probe's verdicts; for SeaweedFS also auto's choice, the races through
# s3cond and their controls), beside the probe cells every test run has.
set -euo pipefail
cd "$(dirname "$0")/.."
versitygw_bin="$HOME/.cache/s3cond/bin"
mkdir -p "$versitygw_bin"
# Debian's rclone 1.60 has no serve s3.
if [ -z "${S3COND_RCLONE_S3:-}" ] && [ ! -x "$versitygw_bin/rclone-serve-s3" ]; then
	rclone_build=$(mktemp -d)
	GOBIN="$rclone_build" go install github.com/rclone/rclone@v1.76.0
	mv "$rclone_build/rclone" "$versitygw_bin/rclone-serve-s3" && rmdir "$rclone_build"
fi

if [ -z "${S3COND_SEAWEEDFS:-}" ]; then
	scripts/build-seaweedfs.sh
fi

S3COND_PROBE_EXTRA_STORES=1 go test -count=1 -run 'TestProbe|TestSeaweedFS' ./e2e
