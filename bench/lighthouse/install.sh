#!/bin/sh
# Installs Lighthouse into bench/lighthouse/node_modules for `make bench`
# (internal/bench/lighthouse runs node_modules/.bin/lighthouse). Apart from
# bench/js so that `make test`, which builds bench/js, does not fetch its
# 200 packages. Dependencies come from package-lock.json through `npm ci`,
# which runs only when node_modules is missing or older than the lock file,
# so a machine that has them needs no network. Run from anywhere.
set -eu

dir=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
sh "$dir/../../bench/npm-ci.sh" "$dir"
cd "$dir"
test -x node_modules/.bin/lighthouse
