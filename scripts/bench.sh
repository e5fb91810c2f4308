#!/usr/bin/env bash
# Benchmarks s3cond in front of versitygw against versitygw directly, then
# nginx as a pure pass-through in front of the same versitygw (the anchor a
# user would compare s3cond with), then a bare TCP relay (the cost of the
# extra hop alone), measures s3cond's peak memory during a 1 GiB PUT and GET,
# checks the performance targets, and writes the results to docs/performance.md.
#
#   scripts/bench.sh            full run (about 10 minutes on 2 cores)
#   scripts/bench.sh --quick    short run (about 2 minutes) to check the setup
#   scripts/bench.sh --no-s3cond
#                               plumbing check while s3cond does not build: both
#                               endpoints are versitygw, and the file says so
#   scripts/bench.sh --output FILE   write somewhere else than docs/performance.md
#
# versitygw: $S3COND_VERSITYGW, else on PATH, else $HOME/.cache/s3cond/bin/versitygw
# (GOBIN=$HOME/.cache/s3cond/bin go install github.com/versity/versitygw/cmd/versitygw@v1.8.0).
# nginx: Debian's nginx-light (apt-get install nginx-light), on PATH or in /usr/sbin.
# Everything runs on 127.0.0.1 and is stopped on exit.
set -euo pipefail

quick=0
with_s3cond=1
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
output="$repo_root/docs/performance.md"
while (($#)); do
	case "$1" in
	--quick) quick=1 ;;
	--no-s3cond) with_s3cond=0 ;;
	--output)
		output=$(realpath -m "$2")
		shift
		;;
	-h | --help)
		sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "bench.sh: unknown argument $1 (try --help)" >&2
		exit 2
		;;
	esac
	shift
done

if ((quick)); then
	duration=3s
	rounds=1
	object_workloads="get-4k:1,put-4k:1,get-4k:8,put-4k:8,get-1m:4,put-1m:4,get-64m:2,put-64m:2"
	workloads="get-4k:1,put-4k:1,get-4k:8,put-4k:8,cond-create:8,cond-cas:8,hot-cas:8,get-1m:4,put-1m:4,get-64m:2,put-64m:2,list:4"
	rss_size=256m
	rss_label="256 MiB"
else
	# Three rounds of 5 s each, the order of the endpoints alternating, so
	# that neither side always runs first on a cold backend, and a burst of
	# load from elsewhere on the machine hits both sides.
	duration=5s
	rounds=3
	# 4 KiB with one worker too: the latency s3cond adds by itself, where
	# with 16 workers the shared cores queue every process's work.
	object_workloads="get-4k:1,put-4k:1,get-4k:16,put-4k:16,get-1m:8,put-1m:8,get-64m:4,put-64m:4"
	# Conditional creates are judged against unconditional PUTs through
	# s3cond: the two run back to back, so that the machine's drift over
	# minutes (this is a shared virtual machine) does not come between them.
	workloads="get-4k:1,put-4k:1,get-4k:16,put-4k:16,cond-create:16,cond-cas:16,hot-cas:8,get-1m:8,put-1m:8,get-64m:4,put-64m:4,list:8"
	rss_size=1g
	rss_label="1 GiB"
fi

find_versitygw() {
	if [[ -n "${S3COND_VERSITYGW:-}" ]]; then
		echo "$S3COND_VERSITYGW"
	elif command -v versitygw >/dev/null; then
		command -v versitygw
	elif [[ -x "$HOME/.cache/s3cond/bin/versitygw" ]]; then
		echo "$HOME/.cache/s3cond/bin/versitygw"
	else
		echo "bench.sh: versitygw not found; install it with" >&2
		echo "  GOBIN=\$HOME/.cache/s3cond/bin go install github.com/versity/versitygw/cmd/versitygw@v1.8.0" >&2
		return 1
	fi
}
versitygw=$(find_versitygw)
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
if [[ ! -x "$nginx_bin" ]]; then
	echo "bench.sh: nginx not found; install it with: apt-get install nginx-light" >&2
	exit 1
fi

# Other load on the machine skews the ratios more than anything s3cond does:
# record it in the results.
load_before=$(cut -d' ' -f1 /proc/loadavg)

work=$(mktemp -d "${TMPDIR:-/tmp}/s3cond-bench.XXXXXX")
started_pids=()
bench_pid=
# shellcheck disable=SC2317 # run by the EXIT trap
stop_all() {
	local status=$?
	if [[ -n "$bench_pid" ]]; then
		# The benchmark first: it then deletes what it wrote while the
		# servers still run.
		kill -TERM "$bench_pid" 2>/dev/null || true
		wait "$bench_pid" 2>/dev/null || true
	fi
	for pid in "${started_pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${started_pids[@]}"; do
		# Give each server 5 s to exit before it is killed.
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if ((status != 0)); then
		for log in "$work"/*.log; do
			[[ -f "$log" ]] || continue
			echo "--- last lines of $(basename "$log")" >&2
			tail -n 20 "$log" >&2
		done
	fi
	rm -rf "$work"
	exit "$status"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# free_port prints a loopback port nothing listens on (bash's /dev/tcp
# connect fails on a free port). It picks below the kernel's ephemeral range:
# a port in it may be the local end of an outgoing connection, which no
# connect finds but which a listener cannot bind.
ephemeral_low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
((ephemeral_low > 11000)) || ephemeral_low=32768
free_port() {
	local port
	for _ in $(seq 100); do
		port=$((10000 + RANDOM % (ephemeral_low - 10000)))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return 0
		fi
	done
	echo "bench.sh: no free port found" >&2
	return 1
}

# wait_listening PORT PID NAME: wait up to 20 s for PORT to accept connections
# while PID is alive.
wait_listening() {
	local port=$1 pid=$2 name=$3
	for _ in $(seq 200); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "bench.sh: $name exited before it listened" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "bench.sh: $name does not listen on 127.0.0.1:$port after 20 s" >&2
	return 1
}

echo "building into $work/bin" >&2
mkdir -p "$work/bin"
(cd "$repo_root" && go build -o "$work/bin/s3cond-bench" ./cmd/s3cond-bench)
if ((with_s3cond)); then
	(cd "$repo_root" && go build -o "$work/bin/s3cond" ./cmd/s3cond)
fi

backend_key=bench-backend-key
backend_secret=bench-backend-secret-$RANDOM$RANDOM
backend_port=$(free_port)
mkdir -p "$work/versitygw-data"
# Without --keep-alive versitygw answers every request with Connection:
# close, so each request would pay a TCP connect, which real S3 stores spare.
"$versitygw" --port "127.0.0.1:$backend_port" --access "$backend_key" --secret "$backend_secret" --keep-alive \
	posix "$work/versitygw-data" >"$work/versitygw.log" 2>&1 &
backend_pid=$!
started_pids+=("$backend_pid")
wait_listening "$backend_port" "$backend_pid" versitygw
backend_url="http://127.0.0.1:$backend_port"

# A relay with no logic in front of versitygw: what the extra hop costs on
# these shared cores, so that s3cond's own cost can be told apart from it.
relay_port=$(free_port)
"$work/bin/s3cond-bench" relay --listen "127.0.0.1:$relay_port" --to "127.0.0.1:$backend_port" \
	>"$work/relay.log" 2>&1 &
relay_pid=$!
started_pids+=("$relay_pid")
wait_listening "$relay_port" "$relay_pid" relay
relay_url="http://127.0.0.1:$relay_port"

# nginx as a pure pass-through: a keep-alive upstream, HTTP/1.1 to it,
# buffering on (its default), no auth, no access log. The client's Host is
# passed on, so versitygw verifies the client's own signature. One process
# (master_process off), so that its CPU time is one /proc entry, as
# s3cond's is; an event loop needs no more for these loads.
nginx_port=$(free_port)
mkdir -p "$work/nginx"
cat >"$work/nginx/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  client_max_body_size 0;
  upstream versitygw {
    server 127.0.0.1:$backend_port;
    keepalive 128;
  }
  server {
    listen 127.0.0.1:$nginx_port;
    location / {
      proxy_pass http://versitygw;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$http_host;
    }
  }
}
EOF
"$nginx_bin" -p "$work/nginx" -c "$work/nginx/nginx.conf" >>"$work/nginx.log" 2>&1 &
nginx_pid=$!
started_pids+=("$nginx_pid")
wait_listening "$nginx_port" "$nginx_pid" nginx
nginx_url="http://127.0.0.1:$nginx_port"

if ((with_s3cond)); then
	client_key=BENCHCLIENTKEY
	client_secret=bench-client-secret-$RANDOM$RANDOM
	proxy_port=$(free_port)
	# Its own port for /metrics too: the default one may be taken.
	admin_port=$(free_port)
	while [[ "$admin_port" == "$proxy_port" ]]; do admin_port=$(free_port); done
	cat >"$work/s3cond.yaml" <<EOF
server:
  listen: 127.0.0.1:$proxy_port
  region: us-east-1
data_dir: $work/s3cond-data
backend:
  type: s3
  endpoint: $backend_url
  region: us-east-1
  addressing: path
  credentials:
    source: static
    access_key_id: $backend_key
    secret_access_key: $backend_secret
  conditional: lease
keys:
  - access_key_id: $client_key
    secret: $client_secret
    buckets: ["*"]
    access: read-write
lease:
  store: embedded
admin:
  listen: 127.0.0.1:$admin_port
log:
  level: warn
EOF
	mkdir -p "$work/s3cond-data"
	"$work/bin/s3cond" serve --config "$work/s3cond.yaml" >"$work/s3cond.log" 2>&1 &
	proxy_pid=$!
	started_pids+=("$proxy_pid")
	wait_listening "$proxy_port" "$proxy_pid" s3cond
	primary=(--endpoint "http://127.0.0.1:$proxy_port" --access-key "$client_key" --secret-key "$client_secret"
		--label s3cond --rss-pid "$proxy_pid")
	measured_name=s3cond
	rss_pid=$proxy_pid
else
	# Plumbing check: the "proxy" is versitygw itself.
	primary=(--endpoint "$backend_url" --access-key "$backend_key" --secret-key "$backend_secret"
		--label versitygw-again --rss-pid "$backend_pid")
	measured_name=versitygw
	rss_pid=$backend_pid
fi

bench_status=0
run_bench() {
	local status=0
	# In the background and waited for: bash runs a trap only once the
	# foreground command ends, so a TERM would otherwise wait for the suite.
	"$work/bin/s3cond-bench" "$@" &
	bench_pid=$!
	wait "$bench_pid" || status=$?
	bench_pid=
	case $status in
	0) ;;
	1) bench_status=1 ;; # finished, but some operations failed: still report it
	*) exit "$status" ;;
	esac
}

echo "suite: $workloads, $rounds round(s) of $duration per endpoint" >&2
run_bench "${primary[@]}" --compare "$backend_url" \
	--compare-access-key "$backend_key" --compare-secret-key "$backend_secret" --compare-label direct \
	--compare-rss-pid "$backend_pid" \
	--bucket s3cond-bench --workload "$workloads" --duration "$duration" --rounds "$rounds" \
	--json "$work/suite.json" --markdown "$work/suite.md"

echo "the anchor: $object_workloads via nginx, $rounds round(s) of $duration per endpoint" >&2
run_bench --endpoint "$nginx_url" --access-key "$backend_key" --secret-key "$backend_secret" --label nginx \
	--rss-pid "$nginx_pid" --compare "$backend_url" --compare-label direct --compare-rss-pid "$backend_pid" \
	--bucket s3cond-bench --workload "$object_workloads" --duration "$duration" --rounds "$rounds" \
	--json "$work/nginx.json" --markdown "$work/nginx.md"

echo "the hop alone: $object_workloads via a bare TCP relay, $rounds round(s) of $duration per endpoint" >&2
run_bench --endpoint "$relay_url" --access-key "$backend_key" --secret-key "$backend_secret" --label tcp-relay \
	--rss-pid "$relay_pid" --compare "$backend_url" --compare-label direct --compare-rss-pid "$backend_pid" \
	--bucket s3cond-bench --workload "$object_workloads" --duration "$duration" --rounds "$rounds" \
	--json "$work/relay.json" --markdown "$work/relay.md"

echo "peak memory of $measured_name: one $rss_label PUT and one $rss_label GET" >&2
run_bench "${primary[@]}" --bucket s3cond-bench --workload "put-$rss_size:1,get-$rss_size:1" --ops 1 \
	--json "$work/rss.json" --markdown "$work/rss.md"

echo "allocations per forwarded request: BenchmarkForward{Get,Put}4KiB" >&2
(cd "$repo_root" && go test -run '^$' -bench 'BenchmarkForward(Get|Put)4KiB$' -benchmem -benchtime 20000x ./proxy) \
	>"$work/allocs.txt"
"$work/bin/s3cond-bench" targets --suite "$work/suite.json" --anchor "$work/nginx.json" --allocs "$work/allocs.txt" \
	>"$work/targets.md"

idle_rss=$(awk '/^VmRSS:/ {printf "%.0f MiB", $2 / 1024}' "/proc/$rss_pid/status")
cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
memory=$(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1024 / 1024}' /proc/meminfo)
revision=$(git -C "$repo_root" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n "$(git -C "$repo_root" status --porcelain 2>/dev/null)" ]]; then
	revision="$revision (with uncommitted changes)"
fi
# The module version from the build info: versitygw --version says "git"
# for a go-installed binary.
versitygw_version=$(go version -m "$versitygw" 2>/dev/null | awk '$1 == "mod" {print $3; exit}' || true)

mkdir -p "$(dirname "$output")"
{
	echo "# Performance"
	echo
	if ((!with_s3cond)); then
		echo "> **Plumbing check only.** s3cond was not part of this run (\`--no-s3cond\`):"
		echo "> both columns are versitygw, so the ratios only show run-to-run noise."
		echo "> Run \`scripts/bench.sh\` once \`go build ./cmd/s3cond\` works to get real numbers."
		echo
	fi
	echo "Generated by \`scripts/bench.sh$( ((quick)) && echo ' --quick')\` on $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "at revision $revision. Rerun the script to refresh this file. Where the time goes,"
	echo "what was changed for it and how to profile: [performance-notes.md](performance-notes.md)."
	echo
	echo "## Machine"
	echo
	echo "- CPU: $cpu_model, $(nproc) cores"
	echo "- Memory: $memory"
	echo "- $(go version)"
	echo "- Backend: versitygw ${versitygw_version:-(version unknown)}, posix backend on a temporary directory,"
	echo "  started with \`--keep-alive\`: without it versitygw closes the connection after every response,"
	echo "  so each request, direct and s3cond→backend alike, would pay a TCP connect that real S3 stores spare"
	echo "- Load average (1 min) just before the run: $load_before"
	echo
	echo "The load generator, s3cond and versitygw share these cores, over loopback."
	echo "s3cond's own CPU time therefore comes out of the backend's and the client's,"
	echo "so the ratios below are a pessimistic bound for a proxy on its own machine."
	if awk -v load="$load_before" -v cores="$(nproc)" 'BEGIN { exit !(load > cores / 2) }'; then
		echo
		echo "> **The machine was busy** (load $load_before on $(nproc) cores) when this ran: other"
		echo "> processes competed for the CPU, so these numbers are noisy. Rerun on an idle machine."
	fi
	echo
	echo "## Targets"
	echo
	echo "Each target from this run: s3cond's figures from the first table below, nginx's from the"
	echo "second, allocations from \`go test -bench 'BenchmarkForward(Get|Put)4KiB$' -benchmem ./proxy\`."
	echo
	cat "$work/targets.md"
	echo
	echo "## Throughput and latency: via s3cond against versitygw directly"
	echo
	echo "Each workload ran $rounds round(s) of $duration per endpoint, alternating which endpoint went first."
	echo "ratio = ops/s via s3cond ÷ ops/s direct; added p50 = median latency via s3cond − direct."
	echo
	cat "$work/suite.md"
	echo
	echo "In the last table, \"CPU per op\" is the serving process's own CPU time (user and system,"
	echo "from /proc, 10 ms resolution) divided by the operations it served: s3cond's on the s3cond rows,"
	echo "versitygw's on the direct rows. It depends far less than the ratios on how the shared cores"
	echo "were divided: on cores of its own, s3cond would serve about (cores ÷ CPU per op) operations per"
	echo "second before it became the bottleneck."
	echo
	echo "## The anchor: nginx against versitygw directly"
	echo
	echo "nginx $("$nginx_bin" -v 2>&1 | sed 's/^nginx version: //') as a pure pass-through in front of the same versitygw: keep-alive"
	echo "upstream, HTTP/1.1, buffering on, no authentication, no access log, one process. It verifies no"
	echo "signature and re-signs nothing (versitygw checks the client's own), so it is what a proxy costs"
	echo "that only moves HTTP. Same rounds and duration as above, object workloads only; ratio = ops/s via"
	echo "nginx ÷ ops/s direct; CPU per op is nginx's own on its rows."
	echo
	cat "$work/nginx.md"
	echo
	echo "## The hop alone: a bare TCP relay against versitygw directly"
	echo
	echo "\`s3cond-bench relay\` forwards each connection to versitygw byte for byte, with no logic at all:"
	echo "no HTTP parsing, no signing, and on Linux the kernel splices the payload from socket to socket"
	echo "without it passing through the relay. It runs over the same loopback and on the same cores as"
	echo "s3cond above, so this table is what one extra TCP hop costs on this machine by itself, the floor"
	echo "for any proxy here; the difference between this table and the one above is what s3cond's own"
	echo "work costs. Same rounds and duration as above, object workloads only;"
	echo "ratio = ops/s via the relay ÷ ops/s direct; CPU per op as above, the relay's own on its rows."
	echo
	cat "$work/relay.md"
	echo
	echo "## Peak memory during a $rss_label PUT and GET"
	echo
	echo "Peak resident memory (VmHWM, reset before each workload) of the $measured_name process"
	echo "while one client uploads and then downloads a single $rss_label object. s3cond streams"
	echo "bodies, so this should stay far below the object size. Resident memory when idle"
	echo "afterwards: $idle_rss."
	echo
	cat "$work/rss.md"
	echo
	echo "## Workloads"
	echo
	echo "- get-SIZE / put-SIZE: GetObject / PutObject of SIZE bytes (GET reads from a few pre-uploaded"
	echo "  objects and checks the length; PUT rewrites 4 keys per worker). Bodies come from a deterministic"
	echo "  generator and are never held whole in memory."
	echo "- list: ListObjectsV2 of a prefix holding 100 objects."
	echo "- cond-create: PutObject of 4 KiB with \`If-None-Match: *\` on a fresh key each time."
	echo "- cond-cas: each worker owns one key: HeadObject for the ETag, then PutObject with \`If-Match\`."
	echo "- hot-cas: every worker runs HEAD + \`If-Match\` PUT retry loops on one shared key; an operation is a"
	echo "  successful commit (ops/s = commits/s, latency = time to commit including retries), and lost"
	echo "  races are counted as 412 (ETag moved) and 409 (conflicting write still in progress)."
	echo
	echo "Clients: aws-sdk-go-v2, path style, no SDK retries (every failure counts), default request"
	echo "checksums on uploads, response checksum validation only when required. MB = 10^6 bytes;"
	echo "percentiles are nearest-rank over every operation."
} >"$output"
echo "wrote $output" >&2
exit "$bench_status"
