#!/bin/sh
# npm-ci.sh DIR installs DIR's npm packages from its package-lock.json with
# `npm ci`, only when DIR/node_modules is missing or older than the lock, so
# that a machine that has them needs no network. The pinned packages of
# bench/js (the reference JS), bench/lighthouse and e2e/js (axe-core) all
# come through here.
set -eu

cd "$1"

if ! command -v npm >/dev/null 2>&1; then
	echo "npm-ci.sh: npm is missing; install Node.js and npm (Debian: apt-get install -y nodejs npm) and run again" >&2
	exit 1
fi

# npm writes node_modules/.package-lock.json on every install: the installed
# tree's own record, so its age says whether the tree predates the lock.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
	npm ci --no-audit --no-fund
fi
