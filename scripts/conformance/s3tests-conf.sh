#!/usr/bin/env bash
# Prints the s3tests.conf for one target of scripts/conformance.sh.
#   s3tests-conf.sh direct|s3cond HOST:PORT
# Direct: main is versitygw's root, alt and tenant its users. Through s3cond:
# main, alt and tenant are s3cond client keys granted every bucket; the store
# sees all three as its root identity (s3cond has one backend identity), so
# the owner of everything is the root, whichever key made it. main's user_id
# is the store's root ID in both, as the store reports it.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
# shellcheck source=servers.sh
. "$here/servers.sh"
target=$1 hostport=$2
main_access=$ROOT_ACCESS main_secret=$ROOT_SECRET
if [ "$target" = s3cond ]; then
	main_access=$MAIN_ACCESS main_secret=$MAIN_SECRET
fi
user() { # section access secret user_id
	printf '[%s]\ndisplay_name = %s\nuser_id = %s\nemail = %s@example.com\naccess_key = %s\nsecret_key = %s\n' \
		"$1" "$4" "$4" "$4" "$2" "$3"
}
cat <<EOF2
[DEFAULT]
host = ${hostport%:*}
port = ${hostport##*:}
is_secure = False
ssl_verify = False

[fixtures]
bucket prefix = conf-{random}-

EOF2
user "s3 main" "$main_access" "$main_secret" "$ROOT_ACCESS"
echo "api_name = us-east-1"
echo
user "s3 alt" "$ALT_ACCESS" "$ALT_SECRET" "$ALT_ACCESS"
echo
user "s3 tenant" "$TENANT_ACCESS" "$TENANT_SECRET" "$TENANT_ACCESS"
echo "tenant = conftenant"
echo
# IAM sections: required by the suite's config reader; the IAM tests are
# deselected (neither the store nor s3cond serves IAM).
user "iam" "$ALT_ACCESS" "$ALT_SECRET" "$ALT_ACCESS"
echo
user "iam root" "$ALT_ACCESS" "$ALT_SECRET" "$ALT_ACCESS"
echo
user "iam alt root" "$TENANT_ACCESS" "$TENANT_SECRET" "$TENANT_ACCESS"
