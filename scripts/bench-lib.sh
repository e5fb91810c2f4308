# Helpers shared by scripts/bench.sh and scripts/bench-ab.sh: finding
# versitygw, free loopback ports, waiting for listeners, an s3cond config in
# front of the benchmark's versitygw, and stopping everything on exit.
# Sourced; the caller runs start_work first.

# start_work PREFIX: a scratch directory $work, no servers started yet
# (started_pids, bench_pid), and stop_all as the EXIT trap: everything a
# script starts is stopped and $work removed however it ends.
start_work() {
	work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
	started_pids=()
	bench_pid=
	trap stop_all EXIT
	trap 'exit 130' INT TERM
}

find_versitygw() {
	if [[ -n "${S3COND_VERSITYGW:-}" ]]; then
		echo "$S3COND_VERSITYGW"
	elif command -v versitygw >/dev/null; then
		command -v versitygw
	elif [[ -x "$HOME/.cache/s3cond/bin/versitygw" ]]; then
		echo "$HOME/.cache/s3cond/bin/versitygw"
	else
		echo "${0##*/}: versitygw not found; install it with" >&2
		echo "  GOBIN=\$HOME/.cache/s3cond/bin go install github.com/versity/versitygw/cmd/versitygw@v1.8.0" >&2
		return 1
	fi
}

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
	echo "${0##*/}: no free port found" >&2
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
			echo "${0##*/}: $name exited before it listened" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "${0##*/}: $name does not listen on 127.0.0.1:$port after 20 s" >&2
	return 1
}

# write_s3cond_config FILE PORT ADMIN_PORT DATA_DIR: s3cond on PORT in
# front of $backend_url ($backend_key/$backend_secret), one read-write
# client key $client_key/$client_secret, the embedded lease store in
# DATA_DIR.
write_s3cond_config() {
	local file=$1 proxy_port=$2 admin_port=$3 data_dir=$4
	mkdir -p "$data_dir"
	cat >"$file" <<EOF
server:
  listen: 127.0.0.1:$proxy_port
  region: us-east-1
data_dir: $data_dir
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
}

# start_versitygw: versitygw (posix, in $work/versitygw-data) on a free
# port, with a random secret; sets backend_key, backend_secret, backend_port,
# backend_pid and backend_url.
start_versitygw() {
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
}

# start_s3cond BINARY CONFIG PORT NAME: runs BINARY serve --config CONFIG,
# logging to $work/NAME.log, and waits for PORT; sets started_pid.
start_s3cond() {
	local binary=$1 config=$2 port=$3 name=$4
	"$binary" serve --config "$config" >"$work/$name.log" 2>&1 &
	started_pid=$!
	started_pids+=("$started_pid")
	wait_listening "$port" "$started_pid" "$name"
}
