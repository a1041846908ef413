package browser

import (
	"context"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"paywallet/shared/walletcrypto"
)

var full = flag.Bool("browser.full", false, "TestFull: run the full browser benchmark and print its result")

// TestSmoke runs the whole benchmark with tiny counts: it proves that every
// pair is there and measurable and that both sides of a pair compute the
// same thing. It asserts nothing about speed.
func TestSmoke(t *testing.T) {
	if _, err := locate(Options{}); err != nil {
		t.Fatal(err) // names `make wasm` or `sh bench/js/build.sh`
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, ev, err := run(ctx, Options{Iterations: 2, Runs: 1, Loads: 1, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}

	have := map[string]Op{}
	for _, op := range res.Ops {
		have[op.Name+"/"+op.Impl] = op
	}
	want := []string{
		"stamp/wasm", "stamp/turnkey-js", "stamp/webcrypto", "stamp/webcrypto-worker",
		"hpke-seal/wasm", "hpke-seal/turnkey-js",
		"hpke-open/wasm", "hpke-open/turnkey-js",
		"otp-seal/wasm", "otp-seal/turnkey-js",
		"keygen/wasm", "keygen/turnkey-js", "keygen/webcrypto", "keygen/webcrypto-worker",
	}
	for _, key := range want {
		op, ok := have[key]
		switch {
		case !ok:
			t.Errorf("%s: not measured", key)
		case op.Stat.MedianMs <= 0 || op.Stat.MinMs <= 0 || op.Stat.MaxMs < op.Stat.MinMs:
			t.Errorf("%s: stat %+v, want positive figures", key, op.Stat)
		case op.Stat.Iterations != 2 || op.Stat.Runs != 1:
			t.Errorf("%s: %d calls x %d runs, want 2 x 1", key, op.Stat.Iterations, op.Stat.Runs)
		case op.Function == "":
			t.Errorf("%s: no function named", key)
		}
	}
	// The figures are those of the page's own path into the module: the
	// worker installed the direct calls.
	if res.WasmCalls != "direct" {
		t.Errorf("paywallet.calls in the worker = %q, want \"direct\" (the worker's glue did not install)", res.WasmCalls)
	}
	if res.ModuleReady.MedianMs <= 0 || res.ModuleReady.Runs != 1 || res.FloorReady.MedianMs <= 0 || res.FloorReady.Runs != 1 {
		t.Errorf("loads in the Worker: wallet %+v, floor %+v, want one positive load each", res.ModuleReady, res.FloorReady)
	}
	if res.LoadEncoding != "br" {
		t.Errorf("the modules came with Content-Encoding %q, want br as in production", res.LoadEncoding)
	}
	if res.FloorBrotli <= 0 || res.FloorBrotli >= res.WasmBrotli {
		t.Errorf("floor module %d B brotli, want positive and less than the wallet module's %d B", res.FloorBrotli, res.WasmBrotli)
	}
	for name, n := range map[string]int64{"raw": res.WasmRaw, "gzip": res.WasmGzip, "brotli": res.WasmBrotli, "bundle": res.BundleBytes} {
		if n <= 0 {
			t.Errorf("%s size %d", name, n)
		}
	}
	if res.Chromium == "" || res.UserAgent == "" {
		t.Errorf("browser not identified: %q, %q", res.Chromium, res.UserAgent)
	}
	for _, pkg := range []string{"@turnkey/api-key-stamper", "@turnkey/crypto", "esbuild"} {
		if res.Packages[pkg] == "" {
			t.Errorf("no installed version of %s in %v", pkg, res.Packages)
		}
	}
	if !res.CrossOriginIsolated {
		t.Log("the page was not cross-origin isolated: performance.now() is coarse")
	}

	// Interop, checked here on its own terms although run checked it too:
	// a stamp from each side verifies in Go over the same payload under the
	// same key, and a ciphertext from each side opens in Go.
	for _, key := range []string{"stamp/wasm", "stamp/turnkey-js"} {
		header, _ := ev.samples[key].(string)
		st, err := walletcrypto.ParseStamp(header)
		if err != nil {
			t.Errorf("%s: %q: %v", key, header, err)
			continue
		}
		if !st.PublicKey.Equal(ev.in.session.PublicKey()) {
			t.Errorf("%s: signed by another key", key)
		}
		if err := st.Verify([]byte(payload)); err != nil {
			t.Errorf("%s: does not verify: %v", key, err)
		}
	}
	for _, key := range []string{"hpke-seal/wasm", "hpke-seal/turnkey-js"} {
		m, _ := ev.samples[key].(map[string]any)
		encHex, _ := m["encappedPublic"].(string)
		ctHex, _ := m["ciphertext"].(string)
		enc, err1 := hex.DecodeString(encHex)
		ct, err2 := hex.DecodeString(ctHex)
		if err1 != nil || err2 != nil || len(enc) == 0 || len(ct) == 0 {
			t.Errorf("%s: not an HPKE seal: %v", key, m)
			continue
		}
		pt, err := walletcrypto.Open(ev.in.recipient, enc, ct)
		if err != nil {
			t.Errorf("%s: does not open in Go: %v", key, err)
		} else if string(pt) != ev.in.plaintext {
			t.Errorf("%s: opened to %q, want %q", key, pt, ev.in.plaintext)
		}
	}

	var b strings.Builder
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b.String())
}

// TestFull is the full benchmark, for a person at a terminal:
//
//	go test ./internal/bench/browser -run TestFull -browser.full -v
func TestFull(t *testing.T) {
	if !*full {
		t.Skip("run with -browser.full")
	}
	start := time.Now()
	res, err := Run(context.Background(), Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	t.Logf("took %s\n%s", time.Since(start).Round(time.Second), b.String())
}

func TestMissingFilesNameTheCommand(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	_, err = locate(Options{WasmDir: empty, BundlePath: filepath.Join(root, "bench", "js", "dist", "turnkey.js")})
	if err == nil || !strings.Contains(err.Error(), "`make wasm`") {
		t.Errorf("no wasm module: got %v, want an error naming `make wasm`", err)
	}
	wasmDir := t.TempDir()
	for _, name := range []string{"wallet.wasm", "wallet.wasm.gz", "wallet.wasm.br", "wasm_exec.js"} {
		if err := os.WriteFile(filepath.Join(wasmDir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err = locate(Options{WasmDir: wasmDir, BundlePath: filepath.Join(empty, "dist", "turnkey.js")})
	if err == nil || !strings.Contains(err.Error(), "`sh bench/js/build.sh`") {
		t.Errorf("no bundle: got %v, want an error naming `sh bench/js/build.sh`", err)
	}
}

func TestNegotiate(t *testing.T) {
	for accept, want := range map[string]string{
		"gzip, deflate, br, zstd": "br",
		"gzip, deflate":           "gzip",
		"br;q=0, gzip;q=0.5":      "gzip",
		"":                        "identity",
		"identity":                "identity",
	} {
		if got := negotiate(accept); got != want {
			t.Errorf("negotiate(%q) = %q, want %q", accept, got, want)
		}
	}
}

func TestSummarize(t *testing.T) {
	got := summarize([]float64{3, 1, 2, 10, 4}, 7)
	if want := (Stat{MedianMs: 3, MinMs: 1, MaxMs: 10, Iterations: 7, Runs: 5}); got != want {
		t.Errorf("odd: %+v, want %+v", got, want)
	}
	got = summarize([]float64{4, 1, 2, 3}, 1)
	if want := (Stat{MedianMs: 2.5, MinMs: 1, MaxMs: 4, Iterations: 1, Runs: 4}); got != want {
		t.Errorf("even: %+v, want %+v", got, want)
	}
}
