#!/usr/bin/env bash
# The container image's machine, as root: podman (runc, this machine's limits) and the base image
# debian:trixie-slim, made from Debian's own packages since no image registry is reachable.
# Idempotent: each part is done only when it is missing. Run by .ci/run; a developer may run it too.
set -euo pipefail

if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v mmdebstrap >/dev/null; then
  apt-get update -qq && apt-get install -y -qq -o DPkg::Lock::Timeout=600 podman runc mmdebstrap
fi

# crun refuses this machine's cgroups, and podman's default limits exceed what it allows.
if [ ! -e /etc/containers/containers.conf ]; then
  mkdir -p /etc/containers
  cat >/etc/containers/containers.conf <<'EOF'
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=16384:16384"]

[engine]
runtime = "runc"
EOF
fi

BASE=debian:trixie-slim
if ! podman image exists "$BASE"; then
  # The mirror this machine's apt uses, for the main archive and the security one.
  mirror="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
    | awk '/^(URIs:|deb[ \t])/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\/.*\/debian\/?$/) { print $i; exit } }' || true)"
  mirror="${mirror:-http://deb.debian.org/debian}"
  mirror="${mirror%/}"
  security="${mirror%/debian}/debian-security"
  # Slim as Debian's own -slim images: no manuals, documentation (but copyrights) or translations.
  mmdebstrap --variant=minbase --quiet \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
    trixie - \
    "deb $mirror trixie main" "deb $mirror trixie-updates main" "deb $security trixie-security main" \
    | podman import --change 'CMD ["bash"]' - "$BASE"
fi
