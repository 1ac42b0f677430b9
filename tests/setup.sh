#!/usr/bin/env bash
# Installs what Collegium's tests need, when it is missing. Idempotent: a
# second run installs nothing. Uses the system package manager when run as
# root (as CI does); otherwise it names what is missing and stops.
#
# Each requirement is a command the tests run and the Debian package that
# provides it. Later pieces of work add theirs here (Chromium, a mail server,
# Python client libraries), so one script sets up a fresh machine.
set -euo pipefail

# command  package  why
requirements=(
  "cc        gcc      rusqlite compiles SQLite from source (bundled)"
  "kill      procps   the daemon tests stop it with SIGTERM"
)

missing_packages=()
for line in "${requirements[@]}"; do
  read -r command package why <<<"$line"
  if ! command -v "$command" >/dev/null 2>&1; then
    echo "setup: missing \`$command\` ($why); package $package"
    missing_packages+=("$package")
  fi
done

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo is not on PATH; install the Rust toolchain (rust-version in Cargo.toml)" >&2
  exit 1
fi

if ((${#missing_packages[@]} > 0)); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: run as root to install: ${missing_packages[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing_packages[@]}"
fi
echo "setup: everything the tests need is installed"
