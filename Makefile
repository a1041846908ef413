# The two commands a newcomer needs: `make run` and `make test`.
# Everything else here is what those two are made of.

GO        ?= go
WASM_EXEC := $(shell $(GO) env GOROOT)/lib/wasm
FUZZTIME  ?= 10s
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test vet unit wasm wasm-test tools chromium brotli fuzz bench clean

## run: the wallet on http://localhost:8080 with an embedded service on SQLite under ./data
run: wasm
	$(GO) run ./cmd/wallet --mode sandbox --dev-mailbox --dev-oidc --database ./data/wallet.db

## test: everything: vet, unit tests with -race (PostgreSQL and Chromium tests included), wasm tests under Node
test: tools wasm vet unit wasm-test

vet:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./wasm/ ./shared/...

unit:
	$(GO) test -race -count=1 -timeout 15m ./...

wasm-test:
	PATH="$(WASM_EXEC):$$PATH" GOOS=js GOARCH=wasm $(GO) test -count=1 ./wasm/ ./shared/...

## wasm: build the browser module (raw, .gz, .br) into web/static/wasm and print the sizes
wasm: brotli
	sh wasm/build.sh

## tools: what the tests need from the system (Chromium for e2e, brotli for the wasm build)
tools: chromium brotli

chromium:
	@command -v chromium >/dev/null 2>&1 || { echo "installing Chromium (apt)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium >/dev/null; }

brotli:
	@command -v brotli >/dev/null 2>&1 || { echo "installing brotli (apt)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq brotli >/dev/null; }

## fuzz: run every Fuzz target of the module for FUZZTIME each
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

## bench: Go micro-benchmarks of the hot paths
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

clean:
	rm -f web/static/wasm/wallet.wasm web/static/wasm/wallet.wasm.gz web/static/wasm/wallet.wasm.br web/static/wasm/wasm_exec.js
