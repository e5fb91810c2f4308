#!/usr/bin/env bash
# Installs what the test suite needs and is missing, on a Debian machine with
# Go and Node, and with moto_server, the AWS CLI and python3 + boto3
# preinstalled (pyenv). test.sh runs it first; it is quick when all is there.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in go node npm python3 aws moto_server; do
	if ! command -v "$tool" >/dev/null; then
		echo "the tests need $tool on PATH" >&2
		exit 1
	fi
done
python3 -c 'import boto3' || { echo "the tests need boto3 for python3" >&2; exit 1; }

# versitygw, the S3 backend of the end-to-end tests (building it takes a few
# minutes on a fresh machine; the cache directory keeps it between runs).
versitygw_bin="$HOME/.cache/s3cond/bin"
if [ -z "${S3COND_VERSITYGW:-}" ] && ! command -v versitygw >/dev/null && [ ! -x "$versitygw_bin/versitygw" ]; then
	mkdir -p "$versitygw_bin"
	GOBIN="$versitygw_bin" go install github.com/versity/versitygw/cmd/versitygw@v1.8.0
fi

# rclone and s3cmd, two of the clients of the compatibility matrix
# (e2e/compat_test.go, docs/compatibility.md), and docker-compose, whose
# `config` validates docker-compose.yml (there is no Docker engine here).
if ! command -v rclone >/dev/null || ! command -v s3cmd >/dev/null || ! command -v docker-compose >/dev/null; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update
	$sudo apt-get install -y rclone s3cmd docker-compose
fi

# Debian's python3-boto3 (botocore 1.29 on bookworm), the distro client of the
# compatibility matrix beside the pip boto3: /usr/bin/python3 imports it.
if ! /usr/bin/python3 -c 'import boto3' 2>/dev/null; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update
	$sudo apt-get install -y python3-boto3
fi

# etcd, the second fleet lease store: internal/testservers starts
# three-member clusters of Debian's etcd-server.
if [ -z "${S3COND_ETCD:-}" ] && ! command -v etcd >/dev/null; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update
	$sudo apt-get install -y etcd-server
fi

# Ceph's RADOS Gateway 16.2 (Debian bookworm's), a real store of the e2e
# tests (e2e/rgw_test.go): internal/testservers runs one monitor, one
# memstore OSD and radosgw. Without the recommends: 51 packages, 67 MB.
if ! command -v radosgw >/dev/null || ! command -v ceph-mon >/dev/null || ! command -v ceph-osd >/dev/null; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update
	$sudo apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd
fi

# dynalite and the AWS SDK for JavaScript, pinned by e2e/node/package-lock.json.
if ! (cd e2e/node && npm ls --omit=dev >/dev/null 2>&1); then
	(cd e2e/node && npm ci --no-audit --no-fund)
fi

# Prometheus and promtool (Debian's prometheus package; installing it starts
# no daemon in a container): scripts/check-deploy.sh checks the rules with
# promtool, e2e/prometheus_test.go scrapes a running s3cond. Helm and nfpm
# come pinned through the Go module proxy (go run), dpkg and systemd-analyze
# with Debian itself.
if ! command -v promtool >/dev/null || ! command -v prometheus >/dev/null; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update
	$sudo apt-get install -y prometheus
fi
for tool in dpkg systemd-analyze; do
	if ! command -v "$tool" >/dev/null; then
		echo "the deployment checks need $tool on PATH (Debian's dpkg and systemd)" >&2
		exit 1
	fi
done
