#!/usr/bin/env bash
# Installs a built s3cond .deb into this machine (through apt-get, so that
# dpkg runs its maintainer scripts), runs s3cond.service's ExecStart the way systemd would (there
# is no systemd here): as the unit's user, with its environment, state
# directory, umask and working directory; waits until s3cond answers on its
# admin and S3 ports, stops it, and purges the package. Then checks what the
# package promises: a static system user, the config 0640 root:s3cond, a
# second install that changes nothing, the user kept on purge. rpm cannot
# install here, so the .rpm's %pre script (deploy/packaging/scripts) runs on
# its own: it must make the same user, twice without harm. Everything it
# made is removed at the end. scripts/check-deploy.sh runs it; by hand:
#   scripts/check-package-install.sh dist/s3cond_0.1.0_amd64.deb
set -euo pipefail

deb=$(realpath "$1")
[ "$(id -u)" -eq 0 ] || exec sudo -- "$0" "$deb"

unit=/lib/systemd/system/s3cond.service
config=/etc/s3cond/config.yaml
rpm_preinstall=$(realpath "$(dirname "$0")/../deploy/packaging/scripts/rpm-preinstall.sh")
fail() {
	echo "check-package-install: $*" >&2
	exit 1
}

# It installs into the real system: never over an s3cond someone uses.
if dpkg-query -W -f='${Status}' s3cond 2>/dev/null | grep -q 'ok installed'; then
	fail "the s3cond package is installed on this machine; this check installs and purges its own"
fi
[ ! -e /etc/default/s3cond ] || fail "/etc/default/s3cond exists; this check writes its own"
user_existed=$(getent passwd s3cond >/dev/null && echo yes || echo no)
state_existed=$([ -e /var/lib/s3cond ] && echo yes || echo no)

# apt-get runs dpkg (maintainer scripts included) and, unlike dpkg, waits
# for the dpkg lock another installer on the machine may hold.
apt_dpkg() {
	apt-get -y -q -o DPkg::Lock::Timeout=600 "$@"
}

work=$(mktemp -d)
pid=""
cleanup() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	apt_dpkg purge s3cond >/dev/null 2>&1 || true
	rm -f /etc/default/s3cond
	[ "$state_existed" = yes ] || rm -rf /var/lib/s3cond
	if [ "$user_existed" = no ] && getent passwd s3cond >/dev/null; then
		userdel s3cond
	fi
	if [ "$user_existed" = no ] && getent group s3cond >/dev/null; then
		groupdel s3cond
	fi
	rm -rf "$work"
}
trap cleanup EXIT

echo "== apt-get install $(basename "$deb")"
apt_dpkg install "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "installing failed"; }

# unit_value KEY: the last KEY= of the [Service] section (systemd's
# last-one-wins for the single-valued keys read here).
unit_value() {
	sed -n '/^\[Service\]/,/^\[/p' "$unit" | sed -n "s/^$1=//p" | tail -n 1
}
# unit_values KEY: every KEY= of the [Service] section, in order.
unit_values() {
	sed -n '/^\[Service\]/,/^\[/p' "$unit" | sed -n "s/^$1=//p"
}

# The identity systemd would give the process: a DynamicUser is an unnamed
# uid from systemd's dynamic range with no supplementary groups.
if [ "$(unit_value DynamicUser)" = yes ]; then
	uid=61234
	gid=61234
	groups=(--clear-groups)
	who="DynamicUser (uid $uid)"
else
	user=$(unit_value User)
	[ -n "$user" ] || fail "$unit names no User= and no DynamicUser=: it would run as root"
	uid=$(id -u "$user") || fail "the unit's User=$user does not exist after installing"
	group=$(unit_value Group)
	gid=$(getent group "${group:-$(id -gn "$user")}" | cut -d: -f3)
	groups=(--init-groups)
	who="User=$user"
fi

# StateDirectory=: systemd makes /var/lib/NAME owned by the unit's user.
state_mode=$(unit_value StateDirectoryMode)
for dir in $(unit_value StateDirectory); do
	install -d -o "$uid" -g "$gid" -m "${state_mode:-0755}" "/var/lib/$dir"
done

# Ports below the kernel's ephemeral range, so that no outgoing connection
# holds one; s3cond fails loudly if another test took it meanwhile.
free_port() {
	local low port
	low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range)
	while :; do
		port=$((10000 + RANDOM % (low - 10000)))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return
		fi
	done
}
s3_port=$(free_port)
admin_port=$(free_port)
[ "$s3_port" != "$admin_port" ] || admin_port=$((s3_port + 1))

# What an operator does after installing: edit the config in place (its
# owner and mode stay) and put overrides in /etc/default/s3cond. The backend
# is unreachable on purpose: serving and answering need no store.
cat >"$config" <<'EOF'
backend:
  type: s3
  endpoint: http://127.0.0.1:1
  region: us-east-1
  credentials:
    source: static
    access_key_id: check-backend-key
    secret_access_key: check-backend-secret
  conditional: lease
keys:
  - access_key_id: AKIACHECKPACKAGE
    secret: check-package-install-secret
    buckets: ["*"]
    access: read-write
lease:
  store: embedded
EOF
printf 'S3COND_SERVER_LISTEN=127.0.0.1:%s\nS3COND_ADMIN_LISTEN=127.0.0.1:%s\n' "$s3_port" "$admin_port" >/etc/default/s3cond

# Environment= then EnvironmentFile= (which win), each one assignment per
# line as in the unit and /etc/default/s3cond.
environment=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
mapfile -t -O 1 environment < <(unit_values Environment)
for file in $(unit_values EnvironmentFile); do
	file=${file#-}
	[ -f "$file" ] && mapfile -t -O "${#environment[@]}" environment < <(grep -v '^[[:space:]]*\(#\|$\)' "$file")
done
read -r -a exec_start <<<"$(unit_value ExecStart)"
umask_value=$(unit_value UMask)
workdir=$(unit_value WorkingDirectory)

echo "== ${exec_start[*]} as $who"
log="$work/s3cond.log"
(
	cd "${workdir:-/}"
	umask "${umask_value:-0022}"
	exec setpriv --reuid="$uid" --regid="$gid" "${groups[@]}" --inh-caps=-all --no-new-privs -- \
		env -i "${environment[@]}" "${exec_start[@]}"
) >"$log" 2>&1 &
pid=$!

# Wait for s3cond's own word that it serves, or for its exit (tail --pid
# ends with the process, and grep then sees the end of the log).
if ! timeout 60 grep -q -m 1 's3cond serving' < <(tail -n +1 -f --pid="$pid" "$log"); then
	cat "$log" >&2
	fail "s3cond as $who did not start"
fi
[ "$(stat -c %u "/proc/$pid")" = "$uid" ] || fail "s3cond runs as uid $(stat -c %u "/proc/$pid"), not $uid"
health=$(curl -fsS "http://127.0.0.1:$admin_port/healthz") || fail "GET /healthz on the admin port failed"
echo "admin /healthz: $health"
status=$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$s3_port/")
[ "$status" = 403 ] || fail "an unsigned GET / on the S3 port answered $status, want 403"
echo "S3 port: unsigned GET / answered 403"
[ -n "$(ls -A /var/lib/s3cond)" ] || fail "s3cond wrote nothing in its data_dir /var/lib/s3cond"
owner=$(find /var/lib/s3cond -mindepth 1 -maxdepth 1 ! -uid "$uid" -printf '%p ')
[ -z "$owner" ] || fail "files in data_dir not owned by the unit's user: $owner"
kill -TERM "$pid"
wait "$pid" || fail "s3cond exited $? on SIGTERM"
pid=""
grep -q 'every request finished' "$log" || fail "s3cond did not shut down gracefully"
echo "installed s3cond served as $who and stopped on SIGTERM: ok"

# check_system_user: s3cond is a system user with its own group, no login
# shell and /var/lib/s3cond as home; sets uid_s3cond.
check_system_user() {
	local home shell first_regular
	IFS=: read -r _ _ uid_s3cond _ _ home shell < <(getent passwd s3cond) || fail "no user s3cond"
	first_regular=$(sed -n 's/^UID_MIN[[:space:]]*//p' /etc/login.defs)
	[ "$uid_s3cond" -lt "${first_regular:-1000}" ] || fail "s3cond (uid $uid_s3cond) is not a system user"
	[ "$(id -gn s3cond)" = s3cond ] || fail "s3cond's group is $(id -gn s3cond)"
	case $shell in */nologin | */false) ;; *) fail "s3cond has the login shell $shell" ;; esac
	[ "$home" = /var/lib/s3cond ] || fail "s3cond's home is $home"
	echo "user s3cond: uid $uid_s3cond, group s3cond, $shell, home $home"
}

echo "== the system user and the config's mode"
check_system_user
[ "$(stat -c '%a %U %G' "$config")" = "640 root s3cond" ] || fail "$config is $(stat -c '%a %U:%G' "$config"), want 640 root:s3cond"
echo "$config 640 root:s3cond: ok"

echo "== installed again (the scripts are idempotent)"
apt_dpkg install --reinstall "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "installing again failed"; }
[ "$(id -u s3cond)" = "$uid_s3cond" ] || fail "the second install changed s3cond's uid"
[ "$(stat -c '%a %U %G' "$config")" = "640 root s3cond" ] || fail "the second install changed $config's mode"
echo "reinstalled: ok"

echo "== purged"
apt_dpkg purge s3cond >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "purging failed"; }
[ ! -e /usr/bin/s3cond ] && [ ! -e "$config" ] || fail "the purge left /usr/bin/s3cond or $config"
getent passwd s3cond >/dev/null || fail "the purge removed the user s3cond (files it owned may remain)"
echo "purged, user s3cond kept: ok"

# Only a user this check made may be removed to try the .rpm's %pre.
if [ "$user_existed" = no ]; then
	echo "== the .rpm's %pre, run twice on this machine"
	userdel s3cond
	getent group s3cond >/dev/null && groupdel s3cond
	sh -e "$rpm_preinstall" 1
	check_system_user
	first=$uid_s3cond
	sh -e "$rpm_preinstall" 2
	[ "$(id -u s3cond)" = "$first" ] || fail "a second %pre changed s3cond's uid"
	echo "rpm %pre: ok"
fi
