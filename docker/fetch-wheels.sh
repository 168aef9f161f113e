#!/usr/bin/env bash
# Download the wheels of docker/requirements.lock into docker/wheels/ (not committed) with this
# machine's pip, its index, proxy and certificates, so that `docker build` needs no route of its own
# to the package index; pip inside the build checks their hashes again. The wheels are this
# machine's, so they are fetched only where it is Python 3.11 on Linux x86_64 like the image
# (elsewhere the build's pip fetches them itself). Used by smoke-test.sh and compose-test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
lock="$(sha256sum docker/requirements.lock | cut -d' ' -f1)"
[ "$(cat docker/wheels/.complete 2>/dev/null)" = "$lock" ] && exit 0  # fetched for this very lock
python3 -c 'import sys, platform; sys.exit(sys.version_info[:2] != (3, 11) or platform.machine() != "x86_64")' \
  || exit 0
tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT
rm -rf docker/wheels
python3 -m venv "$tools/venv"
"$tools/venv/bin/pip" download -q --require-hashes --no-deps --only-binary=:all: \
    -d docker/wheels -r docker/requirements.lock >"$tools/log" 2>&1 \
  || { grep -v '^WARNING' "$tools/log" >&2; exit 1; }
echo "$lock" >docker/wheels/.complete
