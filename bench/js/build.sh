#!/bin/sh
# Builds bench/js/dist/turnkey.js, the Turnkey reference implementations that
# the browser benchmark (internal/bench/browser) loads beside the wasm
# wallet. Dependencies come from package-lock.json through `npm ci`, which
# runs only when node_modules is missing or older than the lock file, so a
# rebuild needs no network. Run from anywhere; prints the bundle size.
set -eu

dir=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
cd "$dir"

if ! command -v npm >/dev/null 2>&1; then
	echo "build.sh: npm is missing; install Node.js and npm (Debian: apt-get install -y nodejs npm) and run again" >&2
	exit 1
fi

# npm writes node_modules/.package-lock.json on every install: it is the
# installed tree's own record, so its age says whether the tree predates
# the lock file.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
	npm ci --no-audit --no-fund
fi

mkdir -p dist
./node_modules/.bin/esbuild entry.js --bundle --format=iife --minify --platform=browser \
	--log-level=warning --outfile=dist/turnkey.js.tmp
mv dist/turnkey.js.tmp dist/turnkey.js
echo "turnkey.js $(wc -c <dist/turnkey.js | tr -d ' ')"
