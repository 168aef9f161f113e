#!/bin/sh
# Rebuild service/static/vendor/editor.js (CodeMirror 6 + fflate, pinned in package.json) and its
# licenses. Needs node and npm; run from anywhere: sh service/static/src/build.sh
set -eu
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
out=../vendor
mkdir -p "$out"
node_modules/.bin/esbuild editor-entry.js --bundle --format=esm --minify --legal-comments=none \
  --target=es2020 --outfile="$out/editor.js"
{
  for p in @codemirror/state @codemirror/view @codemirror/commands @codemirror/search @codemirror/language \
           @lezer/highlight @lezer/common @marijn/find-cluster-break crelt style-mod \
           w3c-keyname fflate; do
    if [ -f "node_modules/$p/LICENSE" ]; then
      printf '== %s %s ==\n' "$p" "$(node -p "require('./node_modules/$p/package.json').version")"
      cat "node_modules/$p/LICENSE"; printf '\n'
    fi
  done
} > "$out/LICENSES.txt"
