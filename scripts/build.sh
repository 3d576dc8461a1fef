#!/usr/bin/env bash
# `npm run build`: builds only what changed, so `npm start` after a first build answers within
# seconds. `tsc -b` keeps each project's build state in a .tsbuildinfo inside its dist/ (deleting
# dist/ is a full rebuild) and skips a project whose sources are unchanged. Compiled files whose
# source is gone are deleted, so a stale dist/ never runs a deleted test or module. The bundles
# (esbuild, well under a second) are made every time.
set -euo pipefail
cd "$(dirname "$0")/.."
PATH="$PWD/node_modules/.bin:$PATH"

tsc -b
npm run --silent bundle -w @pin-auth/client

# orphans: dist/<dir>/x.js (and its map) without <dir>/x.ts
for dir in src scripts test; do
  [ -d "dist/$dir" ] || continue
  find "dist/$dir" -name '*.js' -print | while IFS= read -r js; do
    rel="${js#dist/}"
    [ -f "${rel%.js}.ts" ] || rm -f "$js" "$js.map"
  done
done
find packages/client/dist -name '*.js' ! -name pin-auth-client.js -print | while IFS= read -r js; do
  rel="packages/client/src/${js#packages/client/dist/}"
  [ -f "${rel%.js}.ts" ] || rm -f "$js" "$js.map" "${js%.js}.d.ts" "${js%.js}.d.ts.map"
done

rm -rf dist/src/redis/scripts && cp -r src/redis/scripts dist/src/redis/scripts
mkdir -p dist/demo
esbuild src/demo/browser/main.ts --bundle --format=esm --minify --target=es2020 --outfile=dist/demo/app.js --log-level=warning
esbuild src/demo/style.css --minify --outfile=dist/demo/style.css --log-level=warning
cp src/demo/favicon.svg src/demo/favicon.ico dist/demo/
mkdir -p dist/console
esbuild src/demo/console/browser/main.ts --bundle --format=esm --minify --target=es2020 --outfile=dist/console/console.js --log-level=warning
esbuild src/demo/console/console.css --bundle --minify --outfile=dist/console/console.css --log-level=warning
node dist/scripts/compress-assets.js dist/demo dist/console
