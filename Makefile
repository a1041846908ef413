# The two commands a newcomer needs: `make run` and `make test`.
# Everything else here is what those two are made of.

GO        ?= go
WASM_EXEC := $(shell $(GO) env GOROOT)/lib/wasm
FUZZTIME  ?= 10s
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test vet unit wasm wasm-test bench-js bench-lighthouse e2e-js bench-smoke tools chromium brotli node pg-auto-failover fuzz soak ha-test bench clean

## run: the wallet on http://localhost:8080 with an embedded service on SQLite under ./data
run: wasm
	$(GO) run ./cmd/wallet --mode sandbox --dev-mailbox --dev-oidc --database ./data/wallet.db

## test: everything: vet, unit tests with -race (PostgreSQL and Chromium tests included, the
## benchmarks' smoke tests among them), every Go benchmark run once, wasm tests under Node
## (twice for ./wasm/: through the js.Func methods and through the direct calls)
test: tools wasm bench-js e2e-js vet unit bench-smoke wasm-test

vet:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./wasm/ ./shared/... ./internal/bench/browser/floor/

# Four packages at once on two cores: the long ones (e2e and web in Chromium,
# the store and the service on PostgreSQL, the failover round) mostly wait on
# a browser, a database or a failover, and two at once left the cores idle
# 40 % of the time.
TESTP ?= 4
unit:
	$(GO) test -race -count=1 -p $(TESTP) -timeout 15m ./...

wasm-test:
	PATH="$(WASM_EXEC):$$PATH" GOOS=js GOARCH=wasm $(GO) test -count=1 ./wasm/ ./shared/...
	GOOS=js GOARCH=wasm $(GO) test -count=1 -exec "node $(CURDIR)/wasm/direct_exec.js" ./wasm/

## wasm: build the browser module (raw, .gz, .br) into web/static/wasm and print the sizes
wasm: brotli
	sh wasm/build.sh

## tools: what the tests need from the system (Chromium for e2e, brotli for the wasm build,
## Node.js and npm for the wasm tests and the reference JS of the browser benchmark,
## pg_auto_failover for the failover test's PostgreSQL HA cluster)
tools: chromium brotli node pg-auto-failover

chromium:
	@command -v chromium >/dev/null 2>&1 || { echo "installing Chromium (apt)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium >/dev/null; }

node:
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { echo "installing Node.js and npm (apt)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq nodejs npm >/dev/null; }

## pg-auto-failover: pg_autoctl and the monitor's extension for scripts/pg-ha-cluster.sh
pg-auto-failover:
	@command -v pg_autoctl >/dev/null 2>&1 || { echo "installing pg_auto_failover (apt)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq postgresql-15-auto-failover >/dev/null; }

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

## soak: the seeded fault-injection run (internal/soak) for DURATION per round (PostgreSQL with two
## instances and database crashes, then SQLite): every money operation against paymentsd processes
## killed at random points, then the books checked against the answers. SEED replays a run (each run
## prints its seed; without SEED a new one is drawn). paymentsd is built with -race here: a data
## race, like a panic, in an instance's log fails the run. `make test` runs it for a few seconds.
SEED     ?=
DURATION ?= 2m
soak:
	SOAK_SEED=$(SEED) SOAK_DURATION=$(DURATION) SOAK_RACE=1 $(GO) test -race -count=1 -timeout 0 -run '^TestSoak$$' -v ./internal/soak/

## ha-test: the failover test (internal/hatest) on a local pg_auto_failover cluster
## (scripts/pg-ha-cluster.sh: a monitor and three data nodes, synchronous replication): two
## paymentsd instances and two BFFs under load while the primary is killed, then frozen (its
## network cut), then a service instance is drained and the primary killed again; afterwards
## every acknowledged write is checked in the books and the figures of each round are printed
## (time without writes, answers 503, requests lost). `make test` runs one short kill round.
HA_DURATION ?= 40s
ha-test: pg-auto-failover
	HATEST_ROUNDS=kill,freeze,drain HATEST_DURATION=$(HA_DURATION) HATEST_SEED=$(SEED) $(GO) test -count=1 -timeout 0 -run '^TestFailover$$' -v ./internal/hatest/

## bench: the benchmark report (bench/report/report.md, chart.png, results.json): our wasm
## against the reference JS in one Chromium page, the BFF against a direct call, the service
## on SQLite and PostgreSQL, the Go micro-benchmarks, and Lighthouse on the signed-in Home
## and Send. Takes several minutes.
bench: tools wasm bench-js bench-lighthouse
	$(GO) run ./cmd/bench --out bench/report

## bench-js: the reference JavaScript the browser benchmark compares with (npm, pinned, esbuild)
bench-js:
	sh bench/js/build.sh

## bench-lighthouse: Lighthouse for make bench (npm, pinned; apart from bench-js so make test skips it)
bench-lighthouse:
	sh bench/lighthouse/install.sh

## e2e-js: axe-core, which the e2e tests inject into each page to check it (npm, pinned)
e2e-js:
	sh e2e/js/install.sh

## bench-smoke: every Go benchmark once, so none of them rots (with -race: it reuses the unit build)
bench-smoke:
	$(GO) test -race -run='^$$' -bench=. -benchtime=1x ./...

clean:
	rm -rf bench/js/dist
	rm -f web/static/wasm/wallet.wasm web/static/wasm/wallet.wasm.gz web/static/wasm/wallet.wasm.br web/static/wasm/wasm_exec.js
