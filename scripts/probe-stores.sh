#!/usr/bin/env bash
# The probe's opt-in stores (docs/stores.md): builds rclone v1.76 for its
# `serve s3` (many minutes on a fresh machine; cached after) and runs the
# probe's e2e cells on it, beside the ones every test run has.
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

S3COND_PROBE_EXTRA_STORES=1 go test -count=1 -run 'TestProbe' ./e2e
