#!/bin/sh
# Builds the browser wallet module for `make wasm`:
#   web/static/wasm/wallet.wasm     GOOS=js GOARCH=wasm, -trimpath, stripped,
#                                   inlining only in crypto, the previous GC,
#                                   data segments joined (see below)
#   web/static/wasm/wasm_exec.js    the JS glue of the same Go toolchain
#   web/static/wasm/wallet.wasm.gz  gzip -9 -n
#   web/static/wasm/wallet.wasm.br  brotli -q 11
# and prints the three sizes in bytes. Run from anywhere; GO overrides the
# go command.
#
#   sh wasm/build.sh [package [output.wasm]]
#
# builds another main package the same way (the browser benchmark's
# reference module): output.wasm, its .gz and .br, and wasm_exec.js beside
# it. The package is relative to the repository root.
set -eu

GO=${GO:-go}
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
pkg=${1:-./wasm}
wasm=${2:-$root/web/static/wasm/wallet.wasm}
out=$(dirname -- "$wasm")

if ! command -v brotli >/dev/null 2>&1; then
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "build.sh: brotli not found; installing it with apt-get" >&2
		if ! apt-get install -y brotli >/dev/null 2>&1; then
			apt-get update >/dev/null 2>&1 || true
			if ! apt-get install -y brotli >/dev/null; then
				echo "build.sh: apt-get install brotli failed" >&2
				exit 1
			fi
		fi
	else
		echo "build.sh: the brotli command is missing; install it (Debian: apt-get install brotli) and run again" >&2
		exit 1
	fi
fi

mkdir -p "$out"
cd "$root"
# Inlining is off except in the crypto packages (and the internal packages
# they lean on): it saved about 65 KB of brotli (1,062 KB -> 997 KB) while
# stamp, seal and open stayed within noise of the fully inlined build (go test
# -bench under js/wasm, three runs each). Turning it off in more of crypto
# would save more but costs speed: nistec about 7 KB for stamp, seal and open
# 9-18% slower; fiat about 10 KB for 2-4 times slower; bigmod about 2 KB.
# Later -gcflags patterns override earlier ones for the packages they match.
#
# GOEXPERIMENT=nogreenteagc links the garbage collector of Go 1.25 instead of
# Go 1.26's Green Tea collector: about 10 KB less brotli, and stamp, seal and
# open within noise (same benchmarks). Go 1.26 supports this opt-out and says
# it will drop it in Go 1.27; a toolchain that no longer knows it gets its
# default collector and a note, not a failed build.
#
# datapack then rewrites the data section: the linker leaves out every run of
# eight or more zero bytes, which cuts the runtime's mostly-zero function
# lookup table into some 64,000 tiny segments whose headers compress badly.
# Joining segments less than 4 KB apart writes those zeros back: about 0.7 MB
# more raw, but about 75 KB less brotli and 110 KB less gzip, and the same
# memory image at instantiation (datapack checks it; see wasm/datapack).
experiment=${GOEXPERIMENT:+$GOEXPERIMENT,}nogreenteagc
if ! GOEXPERIMENT=$experiment "$GO" env GOEXPERIMENT >/dev/null 2>&1; then
	echo "build.sh: this Go toolchain no longer has GOEXPERIMENT=nogreenteagc; building with its default garbage collector" >&2
	experiment=${GOEXPERIMENT:-}
fi
GOOS=js GOARCH=wasm CGO_ENABLED=0 GOEXPERIMENT=$experiment "$GO" build -trimpath -ldflags='-s -w' \
	-gcflags='all=-l' -gcflags='crypto/...=' -gcflags='math/bits=' -gcflags='internal/...=' -gcflags='runtime=' -gcflags='syscall/js=' -gcflags='paywallet/wasm=' -gcflags='paywallet/shared/walletcrypto=' -gcflags='encoding/hex=' -gcflags='encoding/base64=' \
	-o "$wasm.tmp" "$pkg"
"$GO" run ./wasm/datapack "$wasm.tmp" "$wasm"
rm -f "$wasm.tmp"
cp "$(GOOS=js GOARCH=wasm "$GO" env GOROOT)/lib/wasm/wasm_exec.js" "$out/wasm_exec.js"
gzip -9 -n -c "$wasm" >"$wasm.gz.tmp"
mv "$wasm.gz.tmp" "$wasm.gz"
brotli -q 11 -f -o "$wasm.br.tmp" "$wasm"
mv "$wasm.br.tmp" "$wasm.br"

size() { wc -c <"$1" | tr -d ' '; }
name=$(basename -- "$wasm")
echo "$name raw $(size "$wasm")"
echo "$name gzip $(size "$wasm.gz")"
echo "$name brotli $(size "$wasm.br")"
