#!/bin/sh
# Installs axe-core into e2e/js/node_modules, where the e2e tests read
# axe.min.js to inject it into the wallet's pages (never from a CDN).
# Dependencies come from package-lock.json through `npm ci`, which runs only
# when node_modules is missing or older than the lock file, so `make test`
# on a machine that has them needs no network. Run from anywhere.
set -eu

dir=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
sh "$dir/../../bench/npm-ci.sh" "$dir"
cd "$dir"
test -f node_modules/axe-core/axe.min.js
