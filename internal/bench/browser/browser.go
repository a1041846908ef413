// Package browser is the in-browser half of `make bench`: in one headless
// Chromium page it times the wasm wallet's hot calls beside Turnkey's
// reference JavaScript (@turnkey/api-key-stamper, @turnkey/crypto, bundled
// by bench/js/build.sh) and beside WebCrypto, the floor, and it times the
// module's load until it is ready. DESIGN.md's performance budgets are
// stated in these terms: a stamp as the page calls it against the JS
// stamper and WebCrypto measured beside it, an HPKE seal against the
// reference JS HPKE, the module's load against a Go module that only
// starts its runtime.
//
// The module is used as the wallet page uses it: in a dedicated module
// Worker, through the page's client, both the wallet page's own files
// (web/static/js/wallet.js and wallet-worker.js, served unchanged). A
// "wasm" figure is therefore a call from the page's main thread to the
// worker and its answer back, the postMessage hop included, while the
// references (Turnkey's JavaScript, WebCrypto) run on the page's main
// thread, as a page that used them would run them.
//
// # What is compared
//
// Each operation is done by every implementation on the same inputs, made
// in Go (see inputs.go), and before anything is timed one output of every
// implementation is checked in Go with walletcrypto: the stamps verify
// under the same session key, the HPKE ciphertexts open with the
// recipient's key to the same plaintext, the OTP bundles open to the same
// OTP plaintext, the opened session keys are the sealed one. A pair that
// does not compute the same thing fails Run instead of being reported.
//
//	op         wasm (client -> worker)     turnkey-js                                      webcrypto
//	stamp      stamp                       ApiKeyStamper.stamp (browser runtime; also      subtle.sign, key imported once
//	                                       "turnkey-js-purejs": runtimeOverride purejs)
//	hpke-seal  hpkeSeal                    hpkeEncrypt
//	hpke-open  decryptSessionKey           decryptCredentialBundle + getPublicKey
//	otp-seal   sealOtp                     encryptOtpCodeToBundle
//	keygen     generateKey                 generateP256KeyPair                             subtle.generateKey + exportKey
//
// stamp and keygen also have "webcrypto-worker": the WebCrypto floor done
// in a bench-only dedicated Worker and asked for with one message each way,
// as the page's client asks the module's worker. It is the floor of a call
// through a Worker, and shows how much of a module figure is the round
// trip itself.
//
// Op.Function says exactly what each call does.
//
// # How it is timed
//
// Calls are awaited one at a time, as the wallet page makes them. After a
// warm-up (V8 compiles wasm lazily and tiers up JavaScript and wasm alike),
// each implementation does Runs runs of N calls, the implementations of an
// operation taking turns run by run, so that a noisy moment on a shared
// machine hits all of them rather than one. A run's figure is its mean time
// per call; Stat gives the median, min and max over the runs. The page is
// served cross-origin isolated (COOP same-origin, COEP require-corp), which
// gives performance.now() its fine resolution; Result.CrossOriginIsolated
// records whether the browser agreed.
//
// A module's load ("module ready in its Worker") is loadWallet on a new
// tab: the worker started, wasm_exec.js and direct.js imported in it, the
// module fetched, compiled and instantiated (instantiateStreaming), the Go
// runtime started, and the worker's ready message received by the page. It
// is timed for the wallet module and for the floor module (package floor,
// same toolchain and flags, only the runtime), in turn, through the same
// client and worker, so that the ratio of the two is what our module adds.
// Every load is in a new tab with a URL never used before and
// Cache-Control: no-store, so neither the HTTP cache nor V8's code cache
// can help. Both modules are served as a browser would get them in
// production: precompressed, brotli if the browser asks for it, else gzip.
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"paywallet/internal/browsertest"
)

// Options says what to measure and where the inputs are.
type Options struct {
	WasmDir      string // web/static/wasm; "" = that directory of the module
	BundlePath   string // bench/js/dist/turnkey.js; "" = that file of the module
	Iterations   int    // calls per run for every operation; 0 = the full defaults (stamp 500, HPKE and OTP 200, keygen 100)
	Runs         int    // runs per implementation; 0 = 5
	Loads        int    // timed loads of each module in its Worker; 0 = 10
	ChromiumPath string // "" = look up chromium / chromium-browser on PATH

	// Logf, if set, is told what is being measured as the run goes on.
	Logf func(format string, args ...any)
}

// Stat summarises the runs of one measurement, in milliseconds per call.
type Stat struct {
	MedianMs, MinMs, MaxMs float64
	Iterations, Runs       int // calls per run, runs
}

// An Op is one operation done by one implementation.
type Op struct {
	Name     string // "stamp", "hpke-seal", "hpke-open", "otp-seal", "keygen"
	Impl     string // "wasm", "turnkey-js", "turnkey-js-purejs" (stamp only), "webcrypto", "webcrypto-worker" (stamp and keygen)
	Function string // what exactly was called
	Stat     Stat
}

// Result is one benchmark run.
type Result struct {
	Chromium, UserAgent string
	CrossOriginIsolated bool
	Ops                 []Op

	// ModuleReady is the wallet module's load in its Worker, from the
	// page's loadWallet call until the worker's ready message (see the
	// package doc); FloorReady is the floor module's, loaded in turn with
	// it the same way (package floor; FloorRaw and FloorBrotli bytes).
	// Iterations 1, Runs = loads. LoadEncoding is the Content-Encoding
	// both came with.
	ModuleReady, FloorReady Stat
	LoadEncoding            string
	FloorRaw, FloorBrotli   int64

	WasmRaw, WasmGzip, WasmBrotli, BundleBytes int64
	Packages                                   map[string]string // npm name -> version installed (node_modules/<pkg>/package.json)

	WasmVersion string   // paywallet.version of the module measured
	WasmCalls   string   // paywallet.calls in the worker: "direct" when the direct calls are installed
	Verified    []string // the interop checks that passed before timing
}

// Ops names the operations in the order they are measured; every one has a
// wasm and a turnkey-js implementation.
var Ops = []string{"stamp", "hpke-seal", "hpke-open", "otp-seal", "keygen"}

// defaultIterations are the calls per run of a full benchmark: enough for a
// run to last well over the timer's resolution even without cross-origin
// isolation, and for the whole page to finish in about a minute here.
var defaultIterations = map[string]int{
	"stamp":     500,
	"hpke-seal": 200,
	"hpke-open": 200,
	"otp-seal":  200,
	"keygen":    100,
}

const (
	defaultRuns  = 5
	defaultLoads = 10
	// warmFull is the least warm-up time per implementation in a full run;
	// it matters for the fast calls, whose warm-up of N calls is short.
	warmFull = 300 * time.Millisecond
	// stepTimeout bounds each call into the page, so a promise that never
	// settles fails the run instead of hanging it.
	stepTimeout = 3 * time.Minute
)

// Run measures everything in one headless Chromium and returns the figures.
// It needs the wasm module (`make wasm`) and the JS bundle
// (`sh bench/js/build.sh`); their absence is an error naming the command.
func Run(ctx context.Context, opt Options) (*Result, error) {
	res, _, err := run(ctx, opt)
	return res, err
}

// evidence is what a run had the page compute, kept for the smoke test's
// own checks.
type evidence struct {
	in      *inputs
	samples map[string]any
}

func run(ctx context.Context, opt Options) (*Result, *evidence, error) {
	begin := time.Now()
	logf := func(format string, args ...any) {
		if opt.Logf != nil {
			opt.Logf("browser bench %5.1fs: "+format, append([]any{time.Since(begin).Seconds()}, args...)...)
		}
	}
	files, err := locate(opt)
	if err != nil {
		return nil, nil, err
	}
	res := &Result{
		WasmRaw:     files.wasmRaw.size,
		WasmGzip:    files.wasmGzip.size,
		WasmBrotli:  files.wasmBrotli.size,
		BundleBytes: files.bundle.size,
		Packages:    installedPackages(filepath.Dir(filepath.Dir(files.bundle.path))),
	}

	root, err := moduleRoot()
	if err != nil {
		return nil, nil, err
	}
	tmp, err := os.MkdirTemp("", "paywallet-browser-floor-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	floor, err := buildFloor(ctx, root, tmp, files.wasmExec.path)
	if err != nil {
		return nil, nil, err
	}
	res.FloorRaw, res.FloorBrotli = int64(len(floor.raw)), int64(len(floor.brotli))

	srv, err := serve(files, floor)
	if err != nil {
		return nil, nil, err
	}
	defer srv.close()

	profile, err := os.MkdirTemp("", "paywallet-browser-bench-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(profile)
	tab, closeBrowser, err := browsertest.Launch(ctx, opt.ChromiumPath, profile)
	if err != nil {
		return nil, nil, err
	}
	// Close the browser before the server (defers run last-in first-out),
	// so its keep-alive connections do not hold up the server's shutdown.
	defer closeBrowser()

	if v, err := chromedp.CallBrowser(tab, cdpbrowser.GetVersion, cdp.Empty{}); err == nil {
		res.Chromium = v.Product
	}

	logf("%s, page %s", res.Chromium, srv.url)
	if err := chromedp.Do(tab, chromedp.Navigate(srv.url+"/bench.html")); err != nil {
		return nil, nil, fmt.Errorf("open the benchmark page: %w", err)
	}
	started, err := evaluate[startInfo](tab, `bench.start("/wasm/wallet.wasm?page=bench")`)
	if err != nil {
		return nil, nil, err
	}
	res.UserAgent = started.UserAgent
	res.CrossOriginIsolated = started.CrossOriginIsolated
	res.WasmVersion = started.WasmVersion
	if res.WasmCalls, err = workerCalls(tab); err != nil {
		return nil, nil, err
	}

	in, err := newInputs(started.ClientPublicKey, started.OTPClientPublicKey)
	if err != nil {
		return nil, nil, err
	}
	ops, err := evaluate[[]measuredOp](tab, "bench.setup("+in.pageJSON()+")")
	if err != nil {
		return nil, nil, err
	}
	if err := checkOpList(ops); err != nil {
		return nil, nil, err
	}
	samples, err := evaluate[map[string]any](tab, "bench.samples()")
	if err != nil {
		return nil, nil, err
	}
	if res.Verified, err = in.check(samples); err != nil {
		return nil, nil, fmt.Errorf("interop check failed, nothing timed: %w", err)
	}
	ev := &evidence{in: in, samples: samples}

	runs := cmp0(opt.Runs, defaultRuns)
	warm := time.Duration(0)
	if opt.Iterations <= 0 {
		warm = warmFull
	}
	for _, name := range Ops {
		n := cmp0(opt.Iterations, defaultIterations[name])
		logf("%s: %d runs of %d calls per implementation", name, runs, n)
		measured, err := evaluate[[]measuredOp](tab, fmt.Sprintf("bench.measure(%q, %d, %d, %d)", name, n, runs, warm.Milliseconds()))
		if err != nil {
			return nil, nil, err
		}
		for _, m := range measured {
			res.Ops = append(res.Ops, Op{Name: m.Name, Impl: m.Impl, Function: m.Function, Stat: summarize(m.Runs, n)})
		}
	}

	loads := cmp0(opt.Loads, defaultLoads)
	logf("%d loads of each module in its Worker: the wallet module and the Go floor, in turn", loads)
	times := map[string][]float64{}
	kinds := []string{"wallet", "floor"}
	for i := range loads {
		// Each round starts with the other one, so neither always follows
		// the same one's tab.
		for k := range kinds {
			kind := kinds[(i+k)%len(kinds)]
			ms, err := loadModule(tab, srv.url, kind, i)
			if err != nil {
				return nil, nil, fmt.Errorf("load %d of the %s module in its Worker: %w", i+1, kind, err)
			}
			times[kind] = append(times[kind], ms)
		}
	}
	if w, f := srv.encoding("wallet"), srv.encoding("floor"); w != f {
		return nil, nil, fmt.Errorf("the wallet module came %s and the floor module %s: the comparison needs one encoding", w, f)
	}
	res.ModuleReady = summarize(times["wallet"], 1)
	res.FloorReady = summarize(times["floor"], 1)
	res.LoadEncoding = srv.encoding("wallet")
	logf("done")
	return res, ev, nil
}

// startInfo is what bench.start resolves with.
type startInfo struct {
	CrossOriginIsolated bool   `json:"crossOriginIsolated"`
	UserAgent           string `json:"userAgent"`
	WasmVersion         string `json:"wasmVersion"`
	ClientPublicKey     string `json:"clientPublicKey"`
	OTPClientPublicKey  string `json:"otpClientPublicKey"`
}

// measuredOp is one element of what bench.measure resolves with (and, without
// runs, of what bench.setup resolves with).
type measuredOp struct {
	Name     string    `json:"name"`
	Impl     string    `json:"impl"`
	Function string    `json:"function"`
	Runs     []float64 `json:"runs"` // milliseconds per call, one per run
}

// loaded is what bench.loadModule resolves with.
type loaded struct {
	ReadyMs float64 `json:"readyMs"`
	Version string  `json:"version"`
}

// loadModule loads a module once in its Worker, in a new tab of the
// browser of tab, and returns the milliseconds until it was ready: kind
// "wallet" is ours, "floor" the Go runtime's reference (see Result).
//
// chromedp turns on the DevTools Network domain in every tab it drives, and
// with it Chromium keeps a copy of each response body for the inspector,
// which cost the main-thread load of the 3.7 MB module 50-70 ms
// (ResponseBodyLoader::DidFinishLoadingBody in a trace) and a later first
// byte; a visitor without DevTools open never pays it. The tab turns the
// domain off before it loads the module. (The worker's fetch is the
// worker's own target's, which chromedp does not drive.)
func loadModule(tab context.Context, base, kind string, i int) (float64, error) {
	ctx, cancel := chromedp.NewContext(tab)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/cold.html")); err != nil {
		return 0, err
	}
	if _, err := chromedp.Call(ctx, network.Disable, cdp.Empty{}); err != nil {
		return 0, fmt.Errorf("turn off the DevTools network domain: %w", err)
	}
	// A query string no earlier request had: nothing cached can match it.
	url := fmt.Sprintf("/wasm/%s.wasm?load=%d-%d", kind, i, time.Now().UnixNano())
	got, err := evaluate[loaded](ctx, fmt.Sprintf("bench.loadModule(%q)", url))
	if err != nil {
		return 0, err
	}
	// The floor says it is the floor; the wallet module says its version.
	if (kind == "floor") != (got.Version == "floor") {
		return 0, fmt.Errorf("loaded %s, and the module says it is version %q", url, got.Version)
	}
	return got.ReadyMs, nil
}

// workerCalls reads paywallet.calls inside the wallet's worker (the page's
// client does not pass it on): "direct" when the worker installed the
// direct calls, so that the figures are those of the page's own path into
// the module rather than of the slower js.Func methods.
func workerCalls(tab context.Context) (string, error) {
	infos, err := chromedp.Targets(tab)
	if err != nil {
		return "", err
	}
	for _, t := range infos {
		if t.Type != "worker" || t.Title != "wallet" {
			continue
		}
		ctx, cancel := chromedp.NewContext(tab, chromedp.WithTargetID(t.TargetID))
		defer cancel()
		return evaluate[string](ctx, `String(globalThis.paywallet && globalThis.paywallet.calls)`)
	}
	var seen []string
	for _, t := range infos {
		seen = append(seen, t.Type+" "+strconv.Quote(t.Title))
	}
	return "", fmt.Errorf("no worker named wallet among the browser's targets (%s)", strings.Join(seen, ", "))
}

// evaluate runs expr in the page, awaits the Promise it returns and decodes
// the result into T.
func evaluate[T any](ctx context.Context, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		name, _, _ := strings.Cut(expr, "(")
		return v, fmt.Errorf("%s in the page: %w", name, err)
	}
	return v, nil
}

// checkOpList makes sure the page offers every operation the result promises
// (a wasm and a turnkey-js implementation of each) and nothing unknown.
func checkOpList(ops []measuredOp) error {
	have := map[string]bool{}
	for _, op := range ops {
		if !slices.Contains(Ops, op.Name) {
			return fmt.Errorf("the page offers an unknown operation %q", op.Name)
		}
		have[op.Name+"/"+op.Impl] = true
	}
	var missing []string
	for _, name := range Ops {
		for _, impl := range []string{"wasm", "turnkey-js"} {
			if !have[name+"/"+impl] {
				missing = append(missing, name+"/"+impl)
			}
		}
	}
	if missing != nil {
		return errors.New("the page lacks " + strings.Join(missing, ", "))
	}
	return nil
}

// summarize turns per-run figures into a Stat of n calls per run.
func summarize(runs []float64, n int) Stat {
	if len(runs) == 0 {
		return Stat{}
	}
	s := slices.Clone(runs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Stat{MedianMs: med, MinMs: s[0], MaxMs: s[len(s)-1], Iterations: n, Runs: len(s)}
}

// cmp0 returns v, or def if v is not positive.
func cmp0(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
