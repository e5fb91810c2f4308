#!/usr/bin/env bash
# Soak test: runs the linearizability tests (e2e/linearizability) with long
# recording phases, so histories hold thousands of operations and many more
# faults (process kills, slow-backend phases) than the CI-short run.
#
#   scripts/soak.sh                      every recording test for 10m each
#   S3COND_SOAK_DURATION=30m scripts/soak.sh
#   S3COND_SOAK_ROUNDS=3 scripts/soak.sh  repeat the whole run three times
#   scripts/soak.sh -run 'Killed'        pass extra `go test` flags (a -run
#                                        pattern replaces the default one)
#
# S3COND_SOAK_DURATION  how long each test records (Go duration; default 10m).
#                       The fault-injection loops (kills, latency phases) run
#                       for the whole duration.
# S3COND_SOAK_ROUNDS    how many times to run the suite (default 1).
# S3COND_CHECK_TIMEOUT  how long porcupine may search one history (default
#                       30m here, 60s in the CI-short run).
# S3COND_LINEARIZABILITY_OUT
#                       where porcupine's HTML visualisation of a failing
#                       history goes (default: the OS temp dir; the test log
#                       names the file).
#
# Needs what the tests need: versitygw, moto (python3 with moto), unshare.
# Porcupine's check of a long history takes memory and minutes; a check
# that does not finish within S3COND_CHECK_TIMEOUT fails the test ("Unknown").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

duration=${S3COND_SOAK_DURATION:-10m}
rounds=${S3COND_SOAK_ROUNDS:-1}
export S3COND_SOAK_DURATION=$duration
export S3COND_CHECK_TIMEOUT=${S3COND_CHECK_TIMEOUT:-30m}

# The tests that record a history; the single-fault tests do not get longer.
pattern='Baseline|WhileProxiesAreKilled|AcrossLeaseStoreRestart|SlowBackend|StrictModeWorkload|MonotonicOffsetProcesses'
for arg in "$@"; do
	if [ "$arg" = -run ]; then pattern=''; fi
done

# No go test timeout: a soak run is watched by a person, and porcupine's
# own check timeout still bounds each test.
for round in $(seq 1 "$rounds"); do
	echo "== soak round $round/$rounds: recording $duration per test"
	# -v: passing tests log their operation counts and faults injected.
	if [ -n "$pattern" ]; then
		go test -count=1 -v -timeout 0 -run "$pattern" "$@" ./e2e/linearizability
	else
		go test -count=1 -v -timeout 0 "$@" ./e2e/linearizability
	fi
done
