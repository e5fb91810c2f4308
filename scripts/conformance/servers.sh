# shellcheck shell=bash
# Starts and stops the servers scripts/conformance.sh runs the suites against:
# versitygw (with its IAM so the suites' second and third users exist) and
# s3cond in front of it. Sourced; uses $work and $versitygw.

# The store's root identity, and its two further users (direct runs).
ROOT_ACCESS=CONFROOTACCESSKEY001
ROOT_SECRET=conformance-root-secret-0001
ALT_ACCESS=CONFALTACCESSKEY0001
ALT_SECRET=conformance-alt-secret-00001
TENANT_ACCESS=CONFTENANTACCESSKEY1
TENANT_SECRET=conformance-tenant-secret-01
# s3cond's client key for the main user. Its alt and tenant keys are the
# store's user keys above, so one suite config serves both targets; through
# s3cond all three reach the store as its root identity.
MAIN_ACCESS=CONFMAINACCESSKEY001
MAIN_SECRET=conformance-main-secret-0001

server_pids=()

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_port PORT NAME LOG: polls until something listens, for 20 s at most.
wait_port() {
	local deadline=$((SECONDS + 20))
	until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
		if [ $SECONDS -ge $deadline ]; then
			echo "conformance: $2 did not start; its log:" >&2
			cat "$3" >&2
			exit 1
		fi
		sleep 0.1
	done
}

# start_versitygw DIR: a fresh store with users alt and tenant (userplus: they
# may create buckets, as the suites' second users do).
start_versitygw() {
	local dir=$1 port
	mkdir -p "$dir/data" "$dir/iam"
	port=$(free_port)
	"$versitygw" --port "127.0.0.1:$port" --access "$ROOT_ACCESS" --secret "$ROOT_SECRET" \
		--keep-alive --iam-dir "$dir/iam" posix "$dir/data" >"$dir/versitygw.log" 2>&1 &
	server_pids+=($!)
	wait_port "$port" versitygw "$dir/versitygw.log"
	GW_ENDPOINT=http://127.0.0.1:$port
	local user
	for user in "$ALT_ACCESS:$ALT_SECRET" "$TENANT_ACCESS:$TENANT_SECRET"; do
		"$versitygw" admin --access "$ROOT_ACCESS" --secret "$ROOT_SECRET" --endpoint-url "$GW_ENDPOINT" \
			create-user --access "${user%%:*}" --secret "${user#*:}" --role userplus >>"$dir/versitygw.log" 2>&1
	done
}

# start_s3cond DIR: s3cond built from the tree in front of $GW_ENDPOINT, lease
# mode, embedded lease store, three client keys granted every bucket, SigV2
# verified unless CONFORMANCE_SIGNATURE_V2=false (the suites' SigV2 tests then
# measure s3cond's SigV2, not only its refusal of it).
start_s3cond() {
	local dir=$1 port admin_port signature_v2=${CONFORMANCE_SIGNATURE_V2:-true}
	port=$(free_port)
	admin_port=$(free_port)
	mkdir -p "$dir/s3cond-data"
	cat >"$dir/s3cond.yaml" <<EOF
server:
  listen: 127.0.0.1:$port
  region: us-east-1
data_dir: $dir/s3cond-data
backend:
  type: s3
  endpoint: $GW_ENDPOINT
  region: us-east-1
  addressing: path
  credentials: {source: static, access_key_id: $ROOT_ACCESS, secret_access_key: $ROOT_SECRET}
  checksums: forward
  conditional: lease
  key_policy: $key_policy
keys:
  - {access_key_id: $MAIN_ACCESS, secret: $MAIN_SECRET, buckets: ["*"], access: read-write}
  - {access_key_id: $ALT_ACCESS, secret: $ALT_SECRET, buckets: ["*"], access: read-write}
  - {access_key_id: $TENANT_ACCESS, secret: $TENANT_SECRET, buckets: ["*"], access: read-write}
lease:
  store: embedded
auth:
  signature_v2: $signature_v2
admin:
  listen: 127.0.0.1:$admin_port
log:
  level: warn
EOF
	"$work/s3cond" serve --config "$dir/s3cond.yaml" >"$dir/s3cond.log" 2>&1 &
	server_pids+=($!)
	wait_port "$port" s3cond "$dir/s3cond.log"
	PROXY_ENDPOINT=http://127.0.0.1:$port
}

# stop_servers stops what start_* started, by process id.
stop_servers() {
	local pid
	for pid in "${server_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	server_pids=()
}
