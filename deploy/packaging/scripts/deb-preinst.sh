#!/bin/sh
# .deb preinst: the static system user s3cond runs the unit (User=s3cond)
# and, through its group, reads /etc/s3cond/config.yaml (0640 root:s3cond),
# which holds the backend's key. Made before unpacking so dpkg gives the
# config its group. Idempotent; removal keeps the user (Debian policy: files
# it owned, e.g. /var/lib/s3cond, may outlive the package).
set -e

if ! getent passwd s3cond >/dev/null; then
	adduser --system --group --home /var/lib/s3cond --no-create-home \
		--shell /usr/sbin/nologin --gecos "s3cond S3 proxy" s3cond
fi
