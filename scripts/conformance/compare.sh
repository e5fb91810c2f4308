#!/usr/bin/env bash
# Compares the pass sets of one suite run directly and through s3cond.
#   compare.sh OUT_DIR SUITE
set -euo pipefail
out=$1 suite=$2
d="$out/$suite-direct" s="$out/$suite-s3cond"
count() { wc -l <"$1" | tr -d ' '; }
echo "## $suite"
echo "direct: $(count "$d.pass") passed, $(count "$d.fail") failed"
echo "s3cond: $(count "$s.pass") passed, $(count "$s.fail") failed"
echo
echo "### passes directly, fails through s3cond"
comm -23 "$d.pass" "$s.pass" | sed 's/^/- /'
echo
echo "### fails directly, passes through s3cond"
comm -13 "$d.pass" "$s.pass" | sed 's/^/- /'
echo
echo "### ran on one side only"
comm -3 <(sort -u "$d.pass" "$d.fail") <(sort -u "$s.pass" "$s.fail") | sed 's/^\t*/- /'
