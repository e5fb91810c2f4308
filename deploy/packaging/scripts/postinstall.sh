#!/bin/sh
# .deb postinst and .rpm %post. A config kept from a package before the
# s3cond user (0640 root:root: an edited conffile survives upgrades with its
# old owner) is unreadable by the service: give it the group. A config whose
# owner or group an administrator chose is left alone.
set -e

config=/etc/s3cond/config.yaml
if [ -f "$config" ] && [ "$(stat -c %U:%G "$config")" = root:root ]; then
	chgrp s3cond "$config"
	chmod 0640 "$config"
fi
