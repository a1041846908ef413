#!/bin/sh
# Installs Lighthouse into bench/lighthouse/node_modules for `make bench`
# (internal/bench/lighthouse runs node_modules/.bin/lighthouse). Apart from
# bench/js so that `make test`, which builds bench/js, does not fetch its
# 200 packages. Dependencies come from package-lock.json through `npm ci`,
# which runs only when node_modules is missing or older than the lock file,
# so a machine that has them needs no network. Run from anywhere.
set -eu

dir=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
cd "$dir"

if ! command -v npm >/dev/null 2>&1; then
	echo "install.sh: npm is missing; install Node.js and npm (Debian: apt-get install -y nodejs npm) and run again" >&2
	exit 1
fi

# npm writes node_modules/.package-lock.json on every install: the installed
# tree's own record, so its age says whether the tree predates the lock.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
	npm ci --no-audit --no-fund
fi
test -x node_modules/.bin/lighthouse
