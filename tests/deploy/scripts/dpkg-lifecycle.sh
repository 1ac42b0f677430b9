#!/usr/bin/env bash
# Installs, reinstalls, removes and purges a Collegium package with the real
# dpkg and its maintainer scripts, inside a throwaway view of this host
# (issue 21 item 8): run under `unshare -m` as root, it lays an overlay over
# / on a tmpfs and chroots into it, so nothing it does reaches the host.
#
#   unshare -m tests/deploy/scripts/dpkg-lifecycle.sh PACKAGE.deb
set -euo pipefail

deb=$1
view=$(mktemp -d)
trap 'umount -R "$view" 2>/dev/null || true; rmdir "$view"' EXIT
mount -t tmpfs tmpfs "$view"
mkdir -p "$view/upper" "$view/work" "$view/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$view/upper,workdir=$view/work" "$view/root"
mount --bind /proc "$view/root/proc"
mount --bind /dev "$view/root/dev"
cp "$deb" "$view/root/collegium.deb"

cp "$(dirname "$0")/dpkg-lifecycle-inside.sh" "$view/root/dpkg-lifecycle-inside.sh"
chroot "$view/root" /bin/bash /dpkg-lifecycle-inside.sh
