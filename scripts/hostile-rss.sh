#!/usr/bin/env bash
# Measures s3cond's memory under a crowd of anonymous slow POST Object
# clients (docs/security.md, "Connection caps"): builds s3cond and
# s3cond-bench, starts s3cond with its embedded development defaults on a
# loopback port, runs "s3cond-bench hostile" against it, prints the table
# row and stops s3cond. Loopback only; bounded by --conns and --hold.
#
#   scripts/hostile-rss.sh [--conns 1000] [--hold 40s] [other hostile flags]
#
# S3COND_BIN runs another s3cond binary (an older build, to compare).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/s3cond-bench" ./cmd/s3cond-bench
bin=${S3COND_BIN:-}
if [[ -z $bin ]]; then
	go build -o "$work/s3cond" ./cmd/s3cond
	bin=$work/s3cond
fi
# Each connection is a descriptor on both sides.
ulimit -n "$(ulimit -Hn)"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$work" && exec "$bin" serve --listen "127.0.0.1:$port" >/dev/null 2>&1) &
pid=$!
for _ in $(seq 100); do
	if (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
	sleep 0.1
done
"$work/s3cond-bench" hostile --address "127.0.0.1:$port" --pid "$pid" "$@"
