#!/usr/bin/env bash
# The checks of dpkg-lifecycle.sh, run inside its throwaway view of the host
# (issue 21 item 8): install, upgrade, remove and purge /collegium.deb.
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
mode() { stat -c "%a %U:%G" "$1"; }
expect_mode() {
  [[ "$(mode "$1")" == "$2" ]] || fail "$1 is $(mode "$1"), not $2 ($3)"
}
overrides() { dpkg-statoverride --list | grep -c collegium || true; }

dpkg -i /collegium.deb >/dev/null
for user in collegium collegium-pdf collegium-browser collegium-mail; do
  getent passwd "$user" >/dev/null || fail "install made no user $user"
done
expect_mode /usr/lib/collegium "750 root:collegium-app" "the app root, §6.1"
expect_mode /usr/lib/collegium/plugins "750 root:collegium-plugins" "the plugins root"
expect_mode /etc/collegium "750 root:collegium" "the configuration"
expect_mode /var/lib/collegium "700 collegium:collegium" "the state directory"
[[ $(overrides) == 3 ]] || fail "install registered $(overrides) statoverrides, not 3"
[[ ! -e /etc/collegium/collegium.toml ]] || fail "install wrote a live configuration"
if ls /etc/systemd/system/*.wants/collegium* >/dev/null 2>&1; then
  fail "install enabled a unit"
fi
dpkg-query -W -f='${Conffiles}' collegium | grep -q /etc/collegium/collegium.toml.example \
  || fail "the example configuration is not a conffile"

# A reinstall is an upgrade to dpkg: the directories unpack closed again.
dpkg -i /collegium.deb >/dev/null
expect_mode /usr/lib/collegium "750 root:collegium-app" "after an upgrade"
expect_mode /etc/collegium "750 root:collegium" "after an upgrade"

# State the deployment made, which removal keeps and purge deletes.
install -m 0640 -g collegium /etc/collegium/collegium.toml.example /etc/collegium/collegium.toml
install -m 0600 -o collegium /dev/null /var/lib/collegium/collegium.db
dpkg -r collegium >/dev/null
[[ -e /var/lib/collegium/collegium.db ]] || fail "removal deleted the store"
[[ -e /etc/collegium/collegium.toml ]] || fail "removal deleted the configuration"
[[ ! -e /usr/lib/collegium/collegium ]] || fail "removal left the daemon"
[[ $(overrides) == 3 ]] || fail "removal dropped the statoverrides"

dpkg -P collegium >/dev/null
for gone in /var/lib/collegium /var/log/collegium /etc/collegium /usr/lib/collegium \
  /var/lib/collegium-homes /var/lib/collegium-workspaces; do
  [[ ! -e "$gone" ]] || fail "purge left $gone"
done
[[ $(overrides) == 0 ]] || fail "purge left $(overrides) statoverrides"
getent passwd collegium >/dev/null || fail "purge removed the user collegium"
echo "dpkg-lifecycle: install, upgrade, remove and purge as expected"

