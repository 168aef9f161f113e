#!/usr/bin/env bash
# Prove docker/compose.yaml: REPLICAS copies of the service behind nginx sharing one compile cache.
# Brings the stack up on a loopback port, checks the proxy spreads requests over every replica,
# runs benchmarks/service_load.py and benchmarks/overload.py (burst and probe) through the proxy,
# counts the files of the shared cache, and takes the stack down again.
#
#   docker/compose-test.sh        (needs a Docker daemon and `docker compose` or `docker-compose`)
#
# REPLICAS (default 3), PORT (default 18765), REQUESTS (default 300), BASE (as in smoke-test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export REPLICAS="${REPLICAS:-3}" PORT="${PORT:-18765}"
REQUESTS="${REQUESTS:-300}"
say() { echo "compose-test: $*"; }
fail() { say "FAILED: $*" >&2; exit 1; }
if docker compose version >/dev/null 2>&1; then compose=(docker compose)
elif command -v docker-compose >/dev/null; then compose=(docker-compose --compatibility)
else fail "neither 'docker compose' nor 'docker-compose' is installed"; fi
export BASE="${BASE:-python:3.11-slim}"
if ! docker image inspect "$BASE" >/dev/null 2>&1 && ! timeout 60 docker pull -q "$BASE" >/dev/null 2>&1; then
  BASE="penrose-base:bookworm-py311"
  docker image inspect "$BASE" >/dev/null 2>&1 || docker/make-base-image.sh "$BASE"
fi
project="penrose-compose-test-$$"
dc() { "${compose[@]}" -p "$project" -f docker/compose.yaml "$@"; }
trap 'dc down -v >/dev/null 2>&1 || true' EXIT
docker/fetch-wheels.sh || fail "could not download the locked wheels"
dc build -q >/dev/null 2>&1 || dc build
dc up -d >/dev/null 2>&1
url="http://127.0.0.1:$PORT"
for _ in $(seq 1 240); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/readyz")" = 200 ] && break
  sleep 0.5
done
# every replica ready, and each one reached through the proxy
for _ in $(seq 1 240); do
  ready=$(for c in $(dc ps -q diagrams); do docker exec "$c" python -c \
    "import urllib.request as u; print(u.urlopen('http://127.0.0.1:8000/readyz').status)" 2>/dev/null; done | grep -c 200 || true)
  [ "$ready" = "$REPLICAS" ] && break
  sleep 0.5
done
[ "$ready" = "$REPLICAS" ] || fail "only $ready of $REPLICAS replicas became ready"
upstreams=$(for _ in $(seq 1 $((REPLICAS * 4))); do
  curl -s -D - -o /dev/null "$url/readyz" | tr -d '\r' | awk -F': ' 'tolower($1) == "x-upstream" {print $2}'
done | sort -u | wc -l)
[ "$upstreams" = "$REPLICAS" ] || fail "the proxy reached $upstreams of $REPLICAS replicas"
say "$REPLICAS replicas behind the proxy at $url, all reached"
PY=.venv/bin/python; [ -x "$PY" ] || PY=python3
"$PY" benchmarks/service_load.py --url "$url" --requests "$REQUESTS" --concurrency 16 | sed 's/^/compose-test: /'
"$PY" benchmarks/overload.py --url "$url" --requests "$REQUESTS" | sed 's/^/compose-test: /'
per_replica=$(for c in $(dc ps -q diagrams); do docker exec "$c" python -c "
import urllib.request as u
t = u.urlopen('http://127.0.0.1:8000/metrics').read().decode()
print(int(sum(float(l.split()[-1]) for l in t.splitlines() if l.startswith('penrose_requests_total') and '/diagrams' in l)))"
done | tr '\n' ' ')
cache=$(docker exec "$(dc ps -q diagrams | head -1)" sh -c 'ls /var/cache/penrose | wc -l; du -sk /var/cache/penrose | cut -f1' | tr '\n' ' ')
say "OK: diagram requests per replica: $per_replica; shared compile cache: $cache(files, KB)"
