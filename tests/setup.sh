#!/usr/bin/env bash
# Installs what Collegium's tests need, when it is missing. Idempotent: a
# second run installs nothing. Uses the system package manager when run as
# root (as CI does); otherwise it names what is missing and stops.
#
# Tools that are not system packages live outside the clone, under
# $COLLEGIUM_TOOLS (default /var/tmp/collegium-tools), so a fresh clone reuses
# them: the Python virtualenv with the third-party Mattermost client, and
# cargo-deb.
set -euo pipefail
cd "$(dirname "$0")/.."

tools="${COLLEGIUM_TOOLS:-/var/tmp/collegium-tools}"

# command  package  why
commands=(
  "cc        gcc       rusqlite compiles SQLite from source (bundled)"
  "kill      procps    the daemon tests stop it with SIGTERM"
  "chromium  chromium  the browser client's test drives system Chromium headless"
  "node      nodejs    the browser test runs Playwright (playwright-core) under Node"
  "npm       npm       installs playwright-core for the browser test"
  "python3   python3   runs the third-party Python Mattermost client"
  "pdftotext poppler-utils the PDF worker's benchmark measures its throughput against pdftotext"
  "curl      curl      the SSRF lab's self-tests fetch from inside its worker namespace"
  "getent    libc-bin  the SSRF lab's self-tests resolve through its DNS server"
  "setpriv   util-linux the web tests start the browser and PDF workers as their own users"
  "faketime  faketime  the schedule tests restart the daemon a week on (§4.2)"
  "systemd-analyze  systemd  the deployment tests verify and rate every unit offline (tests/deploy)"
  "systemd-sysusers systemd  the deployment tests make sysusers.d's users in a temporary root"
  "systemd-tmpfiles systemd  the deployment tests make tmpfiles.d's directories in a temporary root"
  "lintian   lintian   the package test checks the Debian package (tests/deploy/tests/package.rs)"
  "shellcheck shellcheck the package test checks the package's maintainer scripts"
  "strip     binutils  the package test strips the debug binaries it packages"
  "unshare   util-linux the package test runs dpkg in a throwaway overlay of the host"
)
# package  why  (packages that put no command on PATH)
packages=(
  "fonts-noto-color-emoji  emoji in the browser test's screenshots"
  "ca-certificates         package downloads over HTTPS"
  "nftables                nft, in /usr/sbin (off a non-root PATH): host provisioning keeps agents' users off the callback port"
  "iproute2                ip, in /usr/sbin: the SSRF lab builds its network namespaces and veth with it"
  "dovecot-imapd           dovecot, in /usr/sbin: the mail tests run a real IMAP server (tests/mail-servers)"
  "dovecot-lmtpd           the mail tests deliver into Dovecot over LMTP, as an SMTP server does"
  "opensmtpd               smtpd, in /usr/sbin: the mail tests submit to a real SMTP server, delivering into Dovecot"
)

missing=()
for line in "${commands[@]}"; do
  read -r command package why <<<"$line"
  if ! command -v "$command" >/dev/null 2>&1; then
    echo "setup: missing \`$command\` ($why); package $package"
    missing+=("$package")
  fi
done
for line in "${packages[@]}"; do
  read -r package why <<<"$line"
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    echo "setup: missing package $package ($why)"
    missing+=("$package")
  fi
done

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo is not on PATH; install the Rust toolchain (rust-version in Cargo.toml)" >&2
  exit 1
fi

if ((${#missing[@]} > 0)); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: run as root to install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# cargo-deb, which builds the Debian package (deploy/build-deb, and the
# package test from the debug binaries), pinned, under the tools directory.
cargo_deb_version=3.8.0
if [[ "$("$tools/cargo/bin/cargo-deb" --version 2>/dev/null)" != *" $cargo_deb_version"* ]]; then
  echo "setup: installing cargo-deb $cargo_deb_version into $tools/cargo"
  mkdir -p "$tools"
  CARGO_TARGET_DIR="$tools/cargo-build" cargo install cargo-deb --locked \
    --version "$cargo_deb_version" --root "$tools/cargo" --quiet
  rm -rf "$tools/cargo-build"
fi

# The third-party clients the simulators are proved with, pinned: the Python
# Mattermost client, and the official OpenAI and Anthropic SDKs.
requirements=(
  tests/mattermost-sim/clients/python/requirements.txt
  tests/model-sim/clients/python/requirements.txt
)
want=$(cat "${requirements[@]}" | sha256sum | cut -d' ' -f1)
venv="$tools/venv"
if [[ ! -x "$venv/bin/python" || "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]]; then
  if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "setup: the Python client needs Python 3.11 or newer; python3 is $(python3 --version)" >&2
    exit 1
  fi
  echo "setup: installing the Python clients into $venv"
  rm -rf "$venv"
  mkdir -p "$tools"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${requirements[@]/#/--requirement=}"
  echo "$want" >"$venv/.requirements.sha256"
fi

# Playwright's library only: it drives the system Chromium and never
# downloads a browser of its own.
browser=tests/mattermost-sim/browser
if [[ ! -d "$browser/node_modules/playwright-core" ]]; then
  echo "setup: installing playwright-core for the browser test"
  (cd "$browser" && npm ci --no-audit --no-fund --loglevel=error)
fi

# The OS users the worker tests run workers as, so socket modes and peer
# checks are exercised between real, distinct users (ARCHITECTURE §4).
test_users=(collegium-test-worker)
for user in "${test_users[@]}"; do
  if ! id -u "$user" >/dev/null 2>&1; then
    if [[ $(id -u) -ne 0 ]]; then
      echo "setup: run as root to create the system user $user" >&2
      exit 1
    fi
    echo "setup: creating the system user $user"
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
  fi
done

# The shell worker runs each command in a cgroup v2 of its own and the
# daemon refuses a worker that cannot (§6.1). A host mounting no cgroup v2
# hierarchy at all gets one where a hybrid host keeps it, when run as root.
if [[ $(id -u) -eq 0 ]] && ! grep -q ' - cgroup2 ' /proc/self/mountinfo; then
  echo "setup: mounting a cgroup v2 hierarchy at /sys/fs/cgroup/unified"
  mkdir -p /sys/fs/cgroup/unified
  mount -t cgroup2 none /sys/fs/cgroup/unified
fi

echo "setup: everything the tests need is installed"
