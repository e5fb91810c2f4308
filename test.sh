#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run installs what it needs first).
# Unit tests run with the race detector; the end-to-end tests in e2e/ run
# without it: they start real servers and move hundreds of MiB, which -race
# would slow several-fold without watching any more of s3cond's own code
# (its processes are separate binaries).
set -euo pipefail
cd "$(dirname "$0")"

echo "== test dependencies"
scripts/test-deps.sh

echo "== go vet"
go vet ./...

echo "== gofmt"
unformatted=$(find . -name '*.go' -not -path './e2e/node/*' -not -path './.git/*' -print0 | xargs -0 gofmt -l)
if [ -n "$unformatted" ]; then
	echo "not gofmt-formatted:" >&2
	echo "$unformatted" >&2
	exit 1
fi

# Linters, pinned by version; `go run pkg@version` fetches them through the
# Go module proxy, so nothing is installed for them.
staticcheck_version=v0.8.2 # honnef.co/go/tools
deadcode_version=v0.52.0   # golang.org/x/tools

echo "== staticcheck ($staticcheck_version)"
go run "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version" ./...

echo "== deadcode ($deadcode_version): functions no program or test reaches"
unreachable=$(go run "golang.org/x/tools/cmd/deadcode@$deadcode_version" -test ./...)
if [ -n "$unreachable" ]; then
	echo "dead code:" >&2
	echo "$unreachable" >&2
	exit 1
fi

echo "== docker-compose files (validated; no Docker engine runs here)"
docker-compose -f docker-compose.yml config -q
docker-compose -f docker-compose.etcd.yml config -q

echo "== deployment artifacts (promtool, helm lint, cross-builds, nfpm .deb installed and run, systemd-analyze)"
scripts/check-deploy.sh

echo "== negative-control builds (every s3cond_unsafe_* tag still builds s3cond; the linearizability suite builds them)"
for tag in $(grep -rhoE '^//go:build .*s3cond_unsafe_[a-z_]+' --include=*.go . | grep -oE 's3cond_unsafe_[a-z_]+' | sort -u); do
	go build -tags "$tag" -o /dev/null ./cmd/s3cond
done

echo "== unit tests (-race)"
go test -race -count=1 $(go list ./... | grep -v '/e2e')

echo "== allocation budgets (skipped under -race above, where sync.Pool drops items at random)"
go test -count=1 -run 'AllocBudget|Allocat' ./sigv4/ ./proxy/ ./internal/backendhttp/

echo "== micro-benchmarks, once each (so they keep compiling and running)"
go test -run '^$' -bench . -benchtime=1x $(go list ./... | grep -v '/e2e')

echo "== end-to-end tests"
# The client matrix rewrites docs/compatibility.md from this run (a FAIL cell
# still fails the test): the published versions are those of this machine.
S3COND_WRITE_COMPAT=1 go test -count=1 -timeout 15m ./e2e/...
