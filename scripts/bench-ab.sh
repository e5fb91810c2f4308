#!/usr/bin/env bash
# A/B benchmark of two revisions of s3cond: the working tree or B_REV (B) and REV (A),
# each built from its own source, both in front of one versitygw with the
# same configuration, run by one s3cond-bench suite that alternates which goes
# first in each round. A change that should cost nothing (a refactoring) is
# shown to cost nothing this way: both sides share the machine's drift.
# Prints a Markdown section on stdout.
#
#   scripts/bench-ab.sh REV [B_REV] [--quick] [--workload LIST]
#
# REV, B_REV: anything git rev-parse takes (a commit, a tag, main~10).
# --workload: s3cond-bench workloads (e.g. list:8) instead of the suite.
# Needs versitygw as scripts/bench.sh does.
set -euo pipefail
# shellcheck source=scripts/bench-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"

rev=
b_rev=
quick=0
workload_override=
while (($#)); do
	case "$1" in
	--quick) quick=1 ;;
	--workload)
		workload_override=$2
		shift
		;;
	-h | --help)
		sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	-*)
		echo "bench-ab.sh: unknown argument $1 (try --help)" >&2
		exit 2
		;;
	*)
		if [[ -z "$rev" ]]; then rev=$1; else b_rev=$1; fi
		;;
	esac
	shift
done
if [[ -z "$rev" ]]; then
	echo "bench-ab.sh: name the revision to compare with (try --help)" >&2
	exit 2
fi
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rev_commit=$(git -C "$repo_root" rev-parse --verify "$rev^{commit}")
rev_short=$(git -C "$repo_root" rev-parse --short "$rev_commit")
if [[ -n "$b_rev" ]]; then
	b_commit=$(git -C "$repo_root" rev-parse --verify "$b_rev^{commit}")
	head_short=$(git -C "$repo_root" rev-parse --short "$b_commit")
else
	head_short=$(git -C "$repo_root" rev-parse --short HEAD)
	if [[ -n "$(git -C "$repo_root" status --porcelain)" ]]; then
		head_short="$head_short (with uncommitted changes)"
	fi
fi

if ((quick)); then
	duration=3s rounds=1
	workloads="get-4k:1,put-4k:1,cond-create:8,get-1m:4"
else
	# The request path a refactoring of the handler, the signer or the
	# lease protocol would slow: small objects alone and in parallel,
	# conditional writes, the hot key, and bodies large enough to stream.
	duration=5s rounds=3
	workloads="get-4k:1,put-4k:1,get-4k:16,put-4k:16,cond-create:16,cond-cas:16,hot-cas:8,get-1m:8,put-1m:8,list:8"
fi
if [[ -n "$workload_override" ]]; then
	workloads=$workload_override
fi

versitygw=$(find_versitygw)
start_work s3cond-bench-ab

echo "building B ($head_short) and A ($rev_short) into $work/bin" >&2
mkdir -p "$work/bin" "$work/a-src"
(cd "$repo_root" && go build -o "$work/bin/s3cond-bench" ./cmd/s3cond-bench)
if [[ -n "$b_rev" ]]; then
	mkdir -p "$work/b-src"
	git -C "$repo_root" archive "$b_commit" | tar -x -C "$work/b-src"
	(cd "$work/b-src" && go build -o "$work/bin/s3cond-b" ./cmd/s3cond)
else
	(cd "$repo_root" && go build -o "$work/bin/s3cond-b" ./cmd/s3cond)
fi
git -C "$repo_root" archive "$rev_commit" | tar -x -C "$work/a-src"
(cd "$work/a-src" && go build -o "$work/bin/s3cond-a" ./cmd/s3cond)

start_versitygw
client_key=BENCHCLIENTKEY
client_secret=bench-client-secret-$RANDOM$RANDOM
declare -A port pid
for side in a b; do
	port[$side]=$(free_port)
	admin_port=$(free_port)
	write_s3cond_config "$work/s3cond-$side.yaml" "${port[$side]}" "$admin_port" "$work/s3cond-$side-data"
	start_s3cond "$work/bin/s3cond-$side" "$work/s3cond-$side.yaml" "${port[$side]}" "s3cond-$side"
	pid[$side]=$started_pid
done

echo "suite: $workloads, $rounds round(s) of $duration per side" >&2
"$work/bin/s3cond-bench" --endpoint "http://127.0.0.1:${port[b]}" --access-key "$client_key" --secret-key "$client_secret" \
	--label B --rss-pid "${pid[b]}" \
	--compare "http://127.0.0.1:${port[a]}" --compare-access-key "$client_key" --compare-secret-key "$client_secret" \
	--compare-label A --compare-rss-pid "${pid[a]}" \
	--bucket s3cond-bench-ab --workload "$workloads" --duration "$duration" --rounds "$rounds" \
	--json "$work/ab.json" --markdown "$work/ab.md" >&2 &
bench_pid=$!
wait "$bench_pid"
bench_pid=

echo "B is $head_short, A is $rev_short; both s3cond on the embedded lease store in"
echo "front of one versitygw on loopback, $rounds round(s) of $duration per side, alternating which side went"
echo "first. ratio = ops/s of B ÷ ops/s of A; added p50 = B's median latency − A's."
echo
cat "$work/ab.md"
