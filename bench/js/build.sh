#!/bin/sh
# Builds bench/js/dist/turnkey.js, the Turnkey reference implementations that
# the browser benchmark (internal/bench/browser) loads beside the wasm
# wallet. Dependencies come from package-lock.json through `npm ci`, which
# runs only when node_modules is missing or older than the lock file, so a
# rebuild needs no network. Run from anywhere; prints the bundle size.
set -eu

dir=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
cd "$dir"

sh "$dir/../npm-ci.sh" "$dir"

mkdir -p dist
./node_modules/.bin/esbuild entry.js --bundle --format=iife --minify --platform=browser \
	--log-level=warning --outfile=dist/turnkey.js.tmp
mv dist/turnkey.js.tmp dist/turnkey.js
echo "turnkey.js $(wc -c <dist/turnkey.js | tr -d ' ')"
