#!/usr/bin/env bash
# Turns one suite run's log into sorted lists of test names.
#   results.sh s3tests|fullflow LOG OUT_PREFIX
# writes OUT_PREFIX.pass and OUT_PREFIX.fail, and for s3tests
# OUT_PREFIX.teardown: tests whose body passed but whose clean-up failed.
#
# A test counts by its own outcome. The s3-tests fixtures delete every
# bucket a test made; on versitygw's posix store that fails for buckets
# that held keys with a "/" (the directories stay behind: BucketNotEmpty),
# the same way directly and through s3cond. pytest reports that as an ERROR
# in teardown after the PASSED test; such a test is listed in .teardown and
# counted as passed.
set -euo pipefail
suite=$1 log=$2 prefix=$3
case $suite in
s3tests)
	# -rA ends with one line per outcome: "PASSED file::name",
	# "FAILED file::name - why", "ERROR file::name - why" (setup or teardown).
	sed -n 's/^PASSED [^:]*::\([^ ]*\).*/\1/p' "$log" | sort -u >"$prefix.pass"
	sed -n 's/^ERROR [^:]*::\([^ ]*\).*/\1/p' "$log" | sort -u >"$prefix.errors"
	comm -12 "$prefix.errors" "$prefix.pass" >"$prefix.teardown"
	{
		sed -n 's/^FAILED [^:]*::\([^ ]*\).*/\1/p' "$log"
		comm -23 "$prefix.errors" "$prefix.pass" # setup failed: the test never ran
	} | sort -u >"$prefix.fail"
	rm "$prefix.errors"
	;;
fullflow)
	# Lines are "PASS name" / "FAIL name: why", coloured.
	sed 's/\x1b\[[0-9;]*m//g' "$log" | sed -n 's/^PASS \([^ :]*\).*/\1/p' | sort -u >"$prefix.pass"
	sed 's/\x1b\[[0-9;]*m//g' "$log" | sed -n 's/^FAIL \([^ :]*\).*/\1/p' | sort -u >"$prefix.fail"
	;;
esac
