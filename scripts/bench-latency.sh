#!/usr/bin/env bash
# The latency mode of scripts/bench.sh: conditional writes at the round-trip
# floor (issue 26). versitygw behind a delay proxy, the DynamoDB lease store
# (moto) behind another, s3cond on loopback in front; one client, 4 KiB
# bodies. Prints a Markdown section (tables and targets) on stdout.
#
#   scripts/bench-latency.sh [--store-rtt 20ms] [--lease-rtt 10ms] [--runs 25]
#
# Run by scripts/bench.sh (its full run, or alone with --latency). Needs
# versitygw and moto_server as the e2e tests do (scripts/test-deps.sh).
set -euo pipefail

store_rtt=20ms
lease_rtt=10ms
runs=25
while (($#)); do
	case "$1" in
	--store-rtt) store_rtt=$2; shift ;;
	--lease-rtt) lease_rtt=$2; shift ;;
	--runs) runs=$2; shift ;;
	-h | --help)
		sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "bench-latency.sh: unknown argument $1 (try --help)" >&2
		exit 2
		;;
	esac
	shift
done

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
(cd "$repo_root" && S3COND_BENCH_STORE_RTT=$store_rtt S3COND_BENCH_LEASE_RTT=$lease_rtt \
	go test -count=1 -run '^$' -bench 'BenchmarkRoundTripFloor' -benchtime "${runs}x" -timeout 60m \
	./e2e/linearizability/) >"$raw" 2>&1 || {
	cat "$raw" >&2
	echo "bench-latency.sh: the benchmark failed" >&2
	exit 1
}

# Benchmark lines: BenchmarkRoundTripFloor/<store>/<op>-<procs> N ns/op v unit v unit ...
# The store's round trip in seconds, for the hot-key target (Go durations
# of one unit: 20ms, 1.5s, 500us).
store_rtt_s=$(awk -v d="$store_rtt" 'BEGIN {
	if (d ~ /ms$/) print d / 1000; else if (d ~ /(us|µs)$/) print d / 1e6; else if (d ~ /s$/) print d + 0; else print ""
}')
awk -v store_rtt="$store_rtt" -v lease_rtt="$lease_rtt" -v runs="$runs" -v store_rtt_s="$store_rtt_s" '
/^BenchmarkRoundTripFloor\// {
	split($1, name, "/")
	store = name[2]; op = name[3]; sub(/-[0-9]+$/, "", op)
	if (!(store in seen)) { seen[store] = 1; stores[++nstores] = store }
	for (i = 3; i < NF; i += 2) value[store, op, $(i + 1)] = $i
}
function ratio(store, op) { return value[store, op, "p50-ms"] / value[store, "put", "p50-ms"] }
function ran(store, op) { return (store SUBSEP op SUBSEP "p50-ms") in value }
function row(store, op, label) {
	if (!ran(store, op)) {
		printf "| %s | not run (see below) | | | |\n", label
		return
	}
	printf "| %s | %.1f | %.2f | %.2f | %.2f |\n", label, value[store, op, "p50-ms"], ratio(store, op),
		value[store, op, "store-req/op"], value[store, op, "lease-calls/op"]
}
function target(what, want, measured, met) {
	printf "| %s | %s | %s | %s |\n", what, want, measured, met ? "yes" : "no"
}
END {
	if (nstores == 0) { print "no benchmark results" > "/dev/stderr"; exit 1 }
	printf "Store round trip %s, lease store round trip %s (DynamoDB'"'"'s API on moto and on dynalite, a one-member etcd), the embedded lease store on\n", store_rtt, lease_rtt
	printf "the local disk; medians of %d operations, one client, 4 KiB bodies, default lease settings.\n", runs
	print "Store requests and lease calls per operation are counted from s3cond'"'"'s own metrics"
	print "(`s3cond_backend_request_duration_seconds_count`, `s3cond_lease_store_call_duration_seconds_count`),"
	print "releases included (they are off the critical path: a write answers before its release)."
	print ""
	for (s = 1; s <= nstores; s++) {
		st = stores[s]
		printf "### %s lease store\n\n", st
		print "| operation | p50 ms | ÷ PUT | store requests/op | lease calls/op |"
		print "|---|--:|--:|--:|--:|"
		row(st, "put", "PUT")
		row(st, "create", "create, new key (`If-None-Match: *`)")
		row(st, "cas-chain", "CAS chain (`If-Match`, the last answer'"'"'s ETag)")
		row(st, "lose-412", "losing `If-Match` (412)")
		row(st, "deleteobjects-1000", "DeleteObjects, 1 000 entries with `ETag`")
		printf "| hot key, 8 CAS writers (HEAD + `If-Match` PUT) | %.1f commits/s | | %.2f per commit | %.2f per commit |\n\n",
			value[st, "hot-cas-8", "commits/s"], value[st, "hot-cas-8", "store-req/commit"], value[st, "hot-cas-8", "lease-calls/commit"]
	}
	print "### Targets"
	print ""
	print "| target | want | measured | met |"
	print "|---|---|---|---|"
	for (s = 1; s <= nstores; s++) {
		st = stores[s]
		target(st ": store requests per create", "2", sprintf("%.2f", value[st, "create", "store-req/op"]), value[st, "create", "store-req/op"] <= 2.05)
		target(st ": store requests per CAS", "2", sprintf("%.2f", value[st, "cas-chain", "store-req/op"]), value[st, "cas-chain", "store-req/op"] <= 2.05)
		target(st ": create ÷ PUT", "≤ 1.8", sprintf("%.2f", ratio(st, "create")), ratio(st, "create") <= 1.8)
		target(st ": CAS ÷ PUT", "≤ 1.8", sprintf("%.2f", ratio(st, "cas-chain")), ratio(st, "cas-chain") <= 1.8)
		target(st ": losing 412 ÷ PUT", "≤ 1.1", sprintf("%.2f", ratio(st, "lose-412")), ratio(st, "lose-412") <= 1.1)
		if (ran(st, "deleteobjects-1000")) {
			target(st ": lease calls per DeleteObjects of 1 000", "≤ 15", sprintf("%.0f", value[st, "deleteobjects-1000", "lease-calls/op"]),
				value[st, "deleteobjects-1000", "lease-calls/op"] <= 15)
		} else {
			# moto copies its tables at every TransactWriteItems, so the run
			# would time moto; dynalite has none
			# (e2e/linearizability/latency_bench_test.go).
			printf "| %s: lease calls per DeleteObjects of 1 000 | ≤ 15 | not run on moto or dynalite (no usable TransactWriteItems); counted in `proxy` (TestDeleteObjectsOf1000EntriesTakesLeasesInBatches): 10 on the request'"'"'s path, 10 releases after | yes |\n", st
		}
		if (store_rtt_s != "") {
			want = 1 / (2 * store_rtt_s)
			target(st ": hot key, 8 CAS writers", sprintf("≥ %.0f commits/s (1 ÷ 2 store RTT)", want),
				sprintf("%.1f", value[st, "hot-cas-8", "commits/s"]), value[st, "hot-cas-8", "commits/s"] >= want)
		}
	}
}' "$raw"
