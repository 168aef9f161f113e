#!/usr/bin/env bash
# Build a Debian 12 (bookworm) base image with Debian's Python 3.11 from Debian's own packages, for
# machines that cannot pull python:3.11-slim from a public image registry:
#
#   sudo docker/make-base-image.sh [TAG]        (default TAG: penrose-base:bookworm-py311)
#   docker build -f docker/Dockerfile --build-arg BASE=penrose-base:bookworm-py311 -t penrose-py .
#
# debootstrap lays a minimal root file system (minbase + python3, python3-venv, ca-certificates),
# apt's lists and caches are dropped, and `docker import` turns the tree into an image. Needs root,
# debootstrap and a Debian mirror (MIRROR, default deb.debian.org).
set -euo pipefail
TAG="${1:-penrose-base:bookworm-py311}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
command -v debootstrap >/dev/null || { echo "make-base-image: debootstrap is not installed" >&2; exit 2; }
ROOT="$(mktemp -d /tmp/penrose-base.XXXXXX)"
trap 'rm -rf "$ROOT"' EXIT
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
    bookworm "$ROOT" "$MIRROR" >"$ROOT.log" 2>&1 || { tail -20 "$ROOT.log" >&2; exit 1; }
rm -f "$ROOT.log"
rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/cache/apt/*.bin "$ROOT"/var/cache/apt/archives/*.deb \
    "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/usr/share/locale/*
tar -C "$ROOT" -c . | docker import \
    --change 'ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["python3"]' - "$TAG" >/dev/null
echo "make-base-image: built $TAG ($(docker image inspect -f '{{.Size}}' "$TAG") bytes)"
