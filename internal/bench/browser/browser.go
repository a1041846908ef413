// Package browser is the in-browser half of `make bench`: in one headless
// Chromium page it times the wasm wallet's hot calls beside Turnkey's
// reference JavaScript (@turnkey/api-key-stamper, @turnkey/crypto, bundled
// by bench/js/build.sh) and beside WebCrypto, the floor, and it times the
// wasm module's cold load. DESIGN.md's performance budgets are stated in
// these terms: a stamp in Chromium wasm against the fastest JS stamper
// measured beside it, an HPKE seal against the reference JS HPKE.
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
//	op         wasm                        turnkey-js                                      webcrypto
//	stamp      stamp                       ApiKeyStamper.stamp (browser runtime; also      subtle.sign, key imported once
//	                                       "turnkey-js-purejs": runtimeOverride purejs)
//	hpke-seal  hpkeSeal                    hpkeEncrypt
//	hpke-open  decryptSessionKey           decryptCredentialBundle + getPublicKey
//	otp-seal   sealOtp                     encryptOtpCodeToBundle
//	keygen     generateKey                 generateP256KeyPair                             subtle.generateKey + exportKey
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
// A cold load is fetch + WebAssembly.instantiateStreaming + go.run until the
// module calls paywalletReady, each in a new tab, with a URL never used
// before and Cache-Control: no-store, so neither the HTTP cache nor V8's
// code cache can help. The module is served as a browser would get it in
// production: precompressed, brotli if the browser asks for it, else gzip.
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	ColdLoads    int    // cold loads of the wasm module; 0 = 10
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
	Impl     string // "wasm", "turnkey-js", "turnkey-js-purejs" (stamp only), "webcrypto"
	Function string // what exactly was called
	Stat     Stat
}

// Result is one benchmark run.
type Result struct {
	Chromium, UserAgent string
	CrossOriginIsolated bool
	Ops                 []Op
	ColdLoad            Stat // fetch + instantiateStreaming + go.run until ready; Iterations 1, Runs = loads

	// The two phases of ColdLoad, and the Content-Encoding the module came with.
	ColdFetchInstantiate, ColdRunToReady Stat
	ColdLoadEncoding                     string

	// The references of ColdLoad, loaded in turn with it in the same
	// browser: FloorColdLoad is a module of the same toolchain and flags
	// that only starts the Go runtime and says it is ready (package floor;
	// FloorRaw and FloorBrotli bytes, served brotli as ours is), the least
	// any Go module takes; EmptyColdLoad is an empty module (8 bytes), what
	// the browser and the harness take for any module at all.
	FloorColdLoad, EmptyColdLoad Stat
	FloorRaw, FloorBrotli        int64

	WasmRaw, WasmGzip, WasmBrotli, BundleBytes int64
	Packages                                   map[string]string // npm name -> version installed (node_modules/<pkg>/package.json)

	WasmVersion string   // paywallet.version of the module measured
	WasmCalls   string   // paywallet.calls: "direct" when the direct calls are installed
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
	defaultRuns      = 5
	defaultColdLoads = 10
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
	started, err := evaluate[startInfo](tab, `bench.start("/wallet.wasm?page=bench")`)
	if err != nil {
		return nil, nil, err
	}
	res.UserAgent = started.UserAgent
	res.CrossOriginIsolated = started.CrossOriginIsolated
	res.WasmVersion = started.WasmVersion
	res.WasmCalls = started.WasmCalls

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

	loads := cmp0(opt.ColdLoads, defaultColdLoads)
	logf("%d cold loads of each: the wallet module, the Go floor, the empty module, in turn", loads)
	var total, phase1, phase2, floorTotal, emptyTotal []float64
	kinds := []string{"wallet", "floor", "empty"}
	for i := range loads {
		// Each round starts with another of the three, so none always
		// follows the same one's tab.
		for k := range kinds {
			kind := kinds[(i+k)%len(kinds)]
			t, err := coldLoad(tab, srv.url, kind, i)
			if err != nil {
				return nil, nil, fmt.Errorf("cold load %d of the %s module: %w", i+1, kind, err)
			}
			switch kind {
			case "wallet":
				total = append(total, t.TotalMs)
				phase1 = append(phase1, t.FetchInstantiateMs)
				phase2 = append(phase2, t.RunMs)
			case "floor":
				floorTotal = append(floorTotal, t.TotalMs)
			default:
				emptyTotal = append(emptyTotal, t.TotalMs)
			}
		}
	}
	if w, f := srv.coldEncoding("wallet"), srv.coldEncoding("floor"); w != f {
		return nil, nil, fmt.Errorf("the wallet module came %s and the floor module %s: the comparison needs one encoding", w, f)
	}
	res.FloorColdLoad = summarize(floorTotal, 1)
	res.EmptyColdLoad = summarize(emptyTotal, 1)
	res.ColdLoad = summarize(total, 1)
	res.ColdFetchInstantiate = summarize(phase1, 1)
	res.ColdRunToReady = summarize(phase2, 1)
	res.ColdLoadEncoding = srv.coldEncoding("wallet")
	logf("done")
	return res, ev, nil
}

// startInfo is what bench.start resolves with.
type startInfo struct {
	CrossOriginIsolated bool   `json:"crossOriginIsolated"`
	UserAgent           string `json:"userAgent"`
	WasmVersion         string `json:"wasmVersion"`
	WasmCalls           string `json:"wasmCalls"`
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

// coldTimes is what bench.loadWasm resolves with.
type coldTimes struct {
	FetchInstantiateMs float64 `json:"fetchInstantiateMs"`
	RunMs              float64 `json:"runMs"`
	TotalMs            float64 `json:"totalMs"`
}

// coldLoad loads a module once in a new tab of the browser of tab: kind
// "wallet" is ours, "floor" the Go runtime's reference, "empty" a module
// with nothing in it (see Result).
//
// chromedp turns on the DevTools Network domain in every tab it drives, and
// with it Chromium keeps a copy of each response body for the inspector: for
// the 3.7 MB decoded module that cost 50-70 ms of the renderer's main thread
// per load (ResponseBodyLoader::DidFinishLoadingBody in a trace) and a later
// first byte, which a visitor without DevTools open never pays. The cold tab
// turns the domain off before it loads the module.
func coldLoad(tab context.Context, base, kind string, i int) (coldTimes, error) {
	ctx, cancel := chromedp.NewContext(tab)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/cold.html")); err != nil {
		return coldTimes{}, err
	}
	if _, err := chromedp.Call(ctx, network.Disable, cdp.Empty{}); err != nil {
		return coldTimes{}, fmt.Errorf("turn off the DevTools network domain: %w", err)
	}
	// A query string no earlier request had: nothing cached can match it.
	url := fmt.Sprintf("/%s.wasm?cold=%d-%d", kind, i, time.Now().UnixNano())
	return evaluate[coldTimes](ctx, fmt.Sprintf("bench.loadWasm(%q, %q)", url, kind))
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
