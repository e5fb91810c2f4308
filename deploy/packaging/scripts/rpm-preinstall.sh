#!/bin/sh
# .rpm %pre: the static system user s3cond runs the unit (User=s3cond) and,
# through its group, reads /etc/s3cond/config.yaml (0640 root:s3cond), which
# holds the backend's key. Made before unpacking so rpm gives the config its
# group. Idempotent; removal keeps the user (Fedora's packaging guidelines:
# files it owned, e.g. /var/lib/s3cond, may outlive the package).
set -e

if ! getent group s3cond >/dev/null; then
	groupadd --system s3cond
fi
if ! getent passwd s3cond >/dev/null; then
	useradd --system --gid s3cond --home-dir /var/lib/s3cond --no-create-home \
		--shell /sbin/nologin --comment "s3cond S3 proxy" s3cond
fi
