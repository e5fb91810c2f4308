#!/usr/bin/env bash
# Checks the deployment artifacts in deploy/ with the real tools (test.sh
# runs it): Prometheus rules (promtool), the Helm chart (lint), the systemd
# units (systemd-analyze verify), the .deb built with nfpm and installed into
# a scratch root whose s3cond then runs, then installed into this machine
# and its unit's ExecStart run as the unit's user until s3cond answers
# (scripts/check-package-install.sh; root or sudo), and the cross-builds. The chart's
# rendered manifests and the rules on a live Prometheus are checked by Go
# tests (internal/deploytest, e2e/prometheus_test.go).
set -euo pipefail
cd "$(dirname "$0")/.."

helm_version=v3.22.0 # helm.sh/helm/v3
nfpm_version=v2.45.2 # github.com/goreleaser/nfpm/v2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== promtool: rules and their unit tests"
promtool check rules deploy/prometheus/s3cond-rules.yml
promtool test rules deploy/prometheus/s3cond-rules.test.yml

echo "== helm ($helm_version) lint"
go run "helm.sh/helm/v3/cmd/helm@$helm_version" lint deploy/helm/s3cond

echo "== cross-builds: linux/amd64, linux/arm64, darwin/arm64"
for platform in linux/amd64 linux/arm64 darwin/arm64; do
	GOOS=${platform%/*} GOARCH=${platform#*/} CGO_ENABLED=0 go build -trimpath -o "$work/s3cond-${platform/\//-}" ./cmd/s3cond
done

echo "== nfpm ($nfpm_version): .deb and .rpm"
arch=$(go env GOARCH)
mkdir -p "$work/dist" "$work/pkg"
cp "$work/s3cond-linux-$arch" "$work/dist/s3cond"
# nfpm reads dist/s3cond relative to the repository root.
ln -sfn "$work/dist" dist.check-deploy
trap 'rm -rf "$work"; rm -f dist.check-deploy' EXIT
sed 's|src: dist/|src: dist.check-deploy/|' deploy/packaging/nfpm.yaml > "$work/nfpm.yaml"
for packager in deb rpm; do
	VERSION=0.0.0-check ARCH=$arch go run "github.com/goreleaser/nfpm/v2/cmd/nfpm@$nfpm_version" \
		pkg --config "$work/nfpm.yaml" --packager "$packager" --target "$work/pkg/"
done

echo "== the .deb installed into a scratch root"
root="$work/root"
dpkg -x "$work"/pkg/*.deb "$root"
"$root/usr/bin/s3cond" version
"$root/usr/bin/s3cond" check-config --config "$root/etc/s3cond/config.yaml" >/dev/null
echo "installed s3cond check-config: ok"

echo "== systemd-analyze verify (the installed units)"
for unit in s3cond.service s3cond@.service; do
	# ExecStart must name an executable: point it at the installed one.
	sed "s|/usr/bin/s3cond|$root/usr/bin/s3cond|" "$root/lib/systemd/system/$unit" > "$work/$unit"
done
cp "$work/s3cond@.service" "$work/s3cond@check.service"
# verify exits 0 on an unknown or unparsable directive (it only warns):
# any complaint fails the check.
complaints=$(systemd-analyze verify "$work/s3cond.service" "$work/s3cond@check.service" 2>&1)
if [ -n "$complaints" ]; then
	echo "$complaints" >&2
	exit 1
fi
echo "units: ok"

echo "== the .rpm carries the scripts that make the user"
for line in "groupadd --system s3cond" "useradd --system --gid s3cond" "chgrp s3cond"; do
	if ! grep -aqF "$line" "$work"/pkg/*.rpm; then
		echo "the .rpm's scripts lack: $line" >&2
		exit 1
	fi
done
echo "rpm scripts: ok"

echo "== the .deb installed, its unit's ExecStart run as the unit's user"
scripts/check-package-install.sh "$work"/pkg/*.deb
