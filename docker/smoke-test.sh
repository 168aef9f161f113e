#!/usr/bin/env bash
# Prove the Docker image: build it, run it, wait for /healthz, POST a Penrose registry trio, check
# the answer is an SVG, check the service runs as a non-root user, report the image's size.
#
#   docker/smoke-test.sh            (from anywhere; needs a running Docker daemon)
#
# BASE (default python:3.11-slim) is used when present or pullable; otherwise the Debian 12 base of
# docker/make-base-image.sh is built (once, a few minutes) and used. TRIO picks the registry trio
# (default ../shared/penrose-registry/set-theory-domain/tree-venn.trio.json). Exit 0 when proven.
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE="${IMAGE:-penrose-py:smoke}"
BASE="${BASE:-python:3.11-slim}"
FALLBACK_BASE="penrose-base:bookworm-py311"
TRIO="${TRIO:-../shared/penrose-registry/set-theory-domain/tree-venn.trio.json}"
say() { echo "smoke-test: $*"; }
fail() { say "FAILED: $*" >&2; exit 1; }

docker info >/dev/null 2>&1 || fail "no Docker daemon is reachable"
[ -f "$TRIO" ] || fail "no trio at $TRIO"

t0=$(date +%s)
if ! docker image inspect "$BASE" >/dev/null 2>&1 && ! timeout 60 docker pull -q "$BASE" >/dev/null 2>&1; then
  say "cannot pull $BASE; using $FALLBACK_BASE from Debian's packages"
  BASE="$FALLBACK_BASE"
  docker image inspect "$BASE" >/dev/null 2>&1 || docker/make-base-image.sh "$BASE"
fi
t1=$(date +%s)
docker/fetch-wheels.sh || fail "could not download the locked wheels"
build_log="$(mktemp)"
docker build -f docker/Dockerfile --build-arg BASE="$BASE" -t "$IMAGE" . >"$build_log" 2>&1 \
  || { tail -30 "$build_log" >&2; rm -f "$build_log"; fail "docker build failed"; }
rm -f "$build_log"
t2=$(date +%s)

name="penrose-smoke-$$"
cleanup() { docker rm -f "$name" >/dev/null 2>&1 || true; }
trap cleanup EXIT
docker run -d --name "$name" -p 127.0.0.1::8000 -e PENROSE_WORKERS=1 "$IMAGE" >/dev/null
url="http://$(docker port "$name" 8000/tcp | head -1)"
for _ in $(seq 1 120); do
  curl -fsS "$url/healthz" >/dev/null 2>&1 && break
  [ "$(docker inspect -f '{{.State.Running}}' "$name")" = true ] || { docker logs "$name" >&2; fail "container exited"; }
  sleep 0.5
done
curl -fsS "$url/healthz" >/dev/null || fail "/healthz did not answer within 60 s"
for _ in $(seq 1 240); do  # the layout workers take a few seconds to start
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/readyz")" = 200 ] && break
  sleep 0.5
done
t3=$(date +%s)

body="$(mktemp)"; svg="$(mktemp)"
trap 'cleanup; rm -f "$body" "$svg"' EXIT
PYTHONPATH=. python3 - "$TRIO" >"$body" <<'PY'
import json, sys
from pathlib import Path
from service.trios import load_trio
t = load_trio(Path(sys.argv[1]), key=Path(sys.argv[1]).stem)
print(json.dumps({"domain": t.domain, "substance": t.substance, "style": t.style,
                  "variation": t.variation, "excludeWarnings": list(t.exclude_warnings)}))
PY
code=$(curl -s -o "$svg" -w '%{http_code}' -H 'content-type: application/json' --data-binary "@$body" "$url/diagrams")
[ "$code" = 200 ] || { cat "$svg" >&2; fail "POST /diagrams answered $code"; }
python3 - "$svg" <<'PY' || fail "the answer is not an SVG document with shapes"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
assert sum(1 for _ in root.iter()) > 5, "an empty picture"
PY
t4=$(date +%s)

uid=$(docker exec "$name" id -u)
[ "$uid" != 0 ] || fail "the service runs as root"
served_by=$(docker top "$name" -o pid,user,args | awk '/service serve/ {print $2; exit}')
[ -n "$served_by" ] && [ "$served_by" != root ] || fail "the server process runs as '${served_by:-?}'"
size=$(docker image inspect -f '{{.Size}}' "$IMAGE")
say "OK: $(basename "$TRIO") -> SVG of $(wc -c <"$svg") bytes; user uid $uid ($served_by); \
image $IMAGE from $BASE: $((size / 1000000)) MB; base $((t1 - t0)) s, build $((t2 - t1)) s, \
start $((t3 - t2)) s, first diagram $((t4 - t3)) s"
