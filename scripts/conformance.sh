#!/usr/bin/env bash
# Conformance: runs two public S3 test suites directly against versitygw and
# through s3cond (built from this tree, in front of an identical versitygw,
# lease mode, embedded lease store), then compares the pass sets.
#
# NOT run in CI: it needs a checkout of the ceph s3-tests repository (network
# to GitHub, or S3TESTS_DIR) and takes 15-30 minutes on two cores.
# docs/conformance.md publishes its latest results and explains each difference.
#
#   scripts/conformance.sh                 both suites (s3-tests with both boto3s)
#   scripts/conformance.sh s3tests         only the ceph s3-tests subset (pip boto3)
#   scripts/conformance.sh s3tests-debian  the same subset with Debian's python3-boto3
#   scripts/conformance.sh fullflow        only `versitygw test full-flow`
#
# Environment:
#   S3TESTS_DIR      a checkout of github.com/ceph/s3-tests (MIT) to use instead
#                    of cloning it at S3TESTS_COMMIT
#   S3TESTS_COMMIT   the commit cloned when S3TESTS_DIR is unset
#   S3TESTS_K        pytest -k expression choosing the tests (default: names with
#                    object/put/copy/multipart/condition/delete/list, but not
#                    object_lock: a locked object cannot be deleted, and the
#                    suite's set-up, which deletes every test bucket, then fails
#                    for every later test; "" = all)
#   S3TESTS_M        pytest -m expression (default: leaves out lifecycle, IAM,
#                    STS, SNS, s3select, cloud tiers and fails_on_aws tests)
#   CONFORMANCE_OUT  where results go (default: ./conformance-out)
#   CONFORMANCE_TARGETS  which runs to make (default "direct s3cond"; "s3cond"
#                    alone re-measures s3cond against the direct results
#                    already in CONFORMANCE_OUT)
#   S3COND_VERSITYGW the versitygw binary (default: ~/.cache/s3cond/bin/versitygw,
#                    installed by scripts/test-deps.sh)
#   CONFORMANCE_KEY_POLICY backend.key_policy of the s3cond under test (default strict)
#   CONFORMANCE_SIGNATURE_V2 auth.signature_v2 of the s3cond under test (default
#                    true: the suites sign some tests and forms with SigV2)
#   FULLFLOW_TESTS   space-separated versitygw test names to run one by one
#                    instead of the whole full-flow (to re-check a few tests)
#
# s3tests-debian runs the suite with /usr/bin/python3 and Debian's
# python3-boto3 (bookworm: botocore 1.29, which writes boolean headers as
# "True"); its S3 model lacks PutObject's and CompleteMultipartUpload's
# IfMatch/IfNoneMatch, which AWS_DATA_PATH=scripts/conformance/botocore-extras
# adds (an sdk-extras file botocore merges into its model). Its results are
# s3tests-debian-<target>.*.
#
# Needs: go, python3 with boto3 >= 1.35 (IfMatch/IfNoneMatch), Debian's
# python3-pytest python3-munch python3-isodate python3-tz python3-lxml
# python3-dateutil python3-httplib2 (installed here with apt-get when run as
# root). A venv in ~/.cache/s3cond/conformance sees the first python3's
# packages first (its boto3) and Debian's after them.
#
# Results in $CONFORMANCE_OUT: <suite>-<target>.pass / .fail (sorted test
# names), <suite>-<target>.log (the runner's output), and <suite>.diff (the
# tests that pass on one side only), summarised on stdout.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$(pwd)
here="$repo/scripts/conformance"
# shellcheck source=conformance/servers.sh
. "$here/servers.sh"

suites=${1:-all}
out=${CONFORMANCE_OUT:-$repo/conformance-out}
cache="$HOME/.cache/s3cond/conformance"
versitygw=${S3COND_VERSITYGW:-$HOME/.cache/s3cond/bin/versitygw}
S3TESTS_COMMIT=${S3TESTS_COMMIT:-8f0ae7b404a3a2fcf7038bf1e6bf29544fe9b6a3}
S3TESTS_K=${S3TESTS_K-(object or put or copy or multipart or condition or delete or list) and not object_lock}
S3TESTS_M=${S3TESTS_M-not lifecycle and not lifecycle_expiration and not lifecycle_transition and not cloud_transition and not cloud_restore and not s3select and not sns and not test_of_sts and not webidentity_test and not iam_account and not iam_user and not iam_role and not iam_tenant and not iam_cross_account and not fails_on_aws}
key_policy=${CONFORMANCE_KEY_POLICY:-strict}
# Some full-flow tests call the AWS SDK with this bundle set; a store on
# plain HTTP needs none.
unset AWS_CA_BUNDLE

mkdir -p "$out" "$cache"
work=$(mktemp -d "${TMPDIR:-/tmp}/s3cond-conformance.XXXXXX")
trap 'stop_servers; rm -rf "$work"' EXIT

echo "building s3cond"
go build -o "$work/s3cond" ./cmd/s3cond
ln -s "$versitygw" "$work/versitygw" # full-flow runs ./versitygw admin ...

# run_suite SUITE TARGET: a fresh versitygw (and s3cond for TARGET=s3cond),
# the suite against it, and its pass and fail lists.
run_suite() {
	local suite=$1 target=$2
	start_versitygw "$work/$suite-$target"
	local endpoint=$GW_ENDPOINT access=$ROOT_ACCESS secret=$ROOT_SECRET
	if [ "$target" = s3cond ]; then
		start_s3cond "$work/$suite-$target"
		endpoint=$PROXY_ENDPOINT access=$MAIN_ACCESS secret=$MAIN_SECRET
	fi
	echo "$suite against $target ($endpoint)"
	local log="$out/$suite-$target.log" started=$SECONDS
	case $suite in
	s3tests) run_s3tests "$target" "$endpoint" "$log" s3tests "$cache/venv/bin/python" ;;
	s3tests-debian) run_s3tests "$target" "$endpoint" "$log" s3tests-debian /usr/bin/python3 ;;
	fullflow) run_fullflow "$endpoint" "$access" "$secret" "$log" ;;
	esac
	stop_servers
	echo "  $(wc -l <"$out/$suite-$target.pass") passed, $(wc -l <"$out/$suite-$target.fail") failed in $((SECONDS - started)) s"
}

# run_s3tests TARGET ENDPOINT LOG SUITE PYTHON
run_s3tests() {
	local target=$1 endpoint=$2 log=$3 suite=$4 python=$5 dir conf="$work/s3tests-$target.conf"
	dir=$(s3tests_checkout)
	python_env
	local data_path=""
	if [ "$suite" = s3tests-debian ]; then
		"$python" -c 'import boto3' || { echo "conformance: $python lacks Debian's python3-boto3" >&2; exit 1; }
		data_path="$here/botocore-extras"
	fi
	"$here/s3tests-conf.sh" "$target" "${endpoint#http://}" >"$conf"
	local args=(-p no:cacheprovider -rA -q -o console_output_style=classic
		s3tests/functional/test_s3.py s3tests/functional/test_headers.py)
	[ -n "$S3TESTS_K" ] && args+=(-k "$S3TESTS_K")
	[ -n "$S3TESTS_M" ] && args+=(-m "$S3TESTS_M")
	(cd "$dir" && S3TEST_CONF=$conf AWS_DATA_PATH=$data_path timeout 3600 "$python" -m pytest "${args[@]}") >"$log" 2>&1 || true
	# -rA ends with one line per test: "PASSED file::name", "FAILED file::name - why".
	"$here/results.sh" s3tests "$log" "$out/$suite-$target"
}

run_fullflow() {
	local endpoint=$1 access=$2 secret=$3 log=$4 target
	target=$(basename "$log" .log)
	target=${target#fullflow-}
	if [ -n "${FULLFLOW_TESTS:-}" ]; then
		local name
		for name in $FULLFLOW_TESTS; do
			(cd "$work" && timeout 300 ./versitygw test -a "$access" -s "$secret" -e "$endpoint" "$name") || true
		done >"$log" 2>&1
	else
		(cd "$work" && timeout 1800 ./versitygw test -a "$access" -s "$secret" -e "$endpoint" full-flow) >"$log" 2>&1 || true
	fi
	"$here/results.sh" fullflow "$log" "$out/fullflow-$target"
}

# s3tests_checkout prints the directory of the s3-tests checkout.
s3tests_checkout() {
	if [ -n "${S3TESTS_DIR:-}" ]; then
		echo "$S3TESTS_DIR"
		return
	fi
	local dir="$cache/s3-tests-$S3TESTS_COMMIT"
	if [ ! -d "$dir" ]; then
		git clone -q https://github.com/ceph/s3-tests "$dir.tmp" >&2
		git -C "$dir.tmp" checkout -q "$S3TESTS_COMMIT" >&2
		mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}

# python_env makes the venv the suite runs in.
python_env() {
	if [ "$(id -u)" = 0 ] && ! dpkg -s python3-pytest python3-munch python3-isodate python3-tz python3-lxml >/dev/null 2>&1; then
		apt-get install -y -qq python3-pytest python3-munch python3-isodate python3-tz python3-lxml python3-dateutil python3-httplib2 >&2
	fi
	if [ ! -x "$cache/venv/bin/python" ]; then
		python3 -m venv --system-site-packages "$cache/venv"
	fi
	local site
	site=$("$cache/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	# Debian's packages (pytest, munch, ...) come after every other: a .pth
	# entry would put them before the first python3's own site-packages, and
	# so Debian's python3-boto3 before the pip boto3. sitecustomize runs
	# once all site directories are on sys.path.
	rm -f "$site/zz-debian-dist-packages.pth"
	echo "import sys; sys.path.append('/usr/lib/python3/dist-packages')" >"$site/sitecustomize.py"
	"$cache/venv/bin/python" -c 'import boto3, pytest, munch, isodate, pytz, lxml, dateutil' ||
		{ echo "conformance: the venv lacks a package s3-tests needs" >&2; exit 1; }
	"$cache/venv/bin/python" -c 'import botocore, sys; sys.exit(tuple(map(int, botocore.__version__.split(".")[:2])) < (1, 35))' ||
		{ echo "conformance: the venv's botocore is older than 1.35 (no IfMatch/IfNoneMatch): not the pip boto3" >&2; exit 1; }
}

case $suites in
all) set -- s3tests s3tests-debian fullflow ;;
s3tests | s3tests-debian | fullflow) set -- "$suites" ;;
*) echo "usage: $0 [all|s3tests|s3tests-debian|fullflow]" >&2; exit 2 ;;
esac
for suite in "$@"; do
	for target in ${CONFORMANCE_TARGETS:-direct s3cond}; do
		run_suite "$suite" "$target"
	done
	"$here/compare.sh" "$out" "$suite" | tee "$out/$suite.diff"
done
