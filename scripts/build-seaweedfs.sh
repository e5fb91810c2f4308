#!/usr/bin/env bash
# Builds SeaweedFS's `weed` (the opt-in SeaweedFS cell of the e2e tests,
# docs/testing.md) into $HOME/.cache/s3cond/bin/weed, pinned by module
# version. `go install …/weed@VERSION` is refused (SeaweedFS's go.mod has a
# replace directive), so the module is downloaded through the Go module
# proxy, copied somewhere writable and built as the main module: about
# 14 minutes on a loaded 2-core machine. Not part of ./test.sh or CI.
set -euo pipefail

seaweedfs_module=github.com/seaweedfs/seaweedfs
seaweedfs_version=v0.0.0-20261109003541-7506e5f91cd6 # SeaweedFS 4.53
bin_dir="$HOME/.cache/s3cond/bin"
target="${S3COND_SEAWEEDFS:-$bin_dir/weed}"

if [ -x "$target" ]; then
	echo "weed is built: $target"
	exit 0
fi
mkdir -p "$(dirname "$target")"

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
# Outside any module, so the download changes no go.mod.
dir=$(cd "$work" && go mod download -json "$seaweedfs_module@$seaweedfs_version" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$dir" ]; then
	echo "go mod download did not report the module's directory" >&2
	exit 1
fi
# The module cache is read-only; the build writes nothing into the module,
# but go refuses a main module whose go.sum it may need to update there.
cp -r "$dir" "$work/seaweedfs"
chmod -R u+w "$work/seaweedfs"
(cd "$work/seaweedfs" && go build -o "$target.partial" ./weed)
mv "$target.partial" "$target"
echo "built $target"
