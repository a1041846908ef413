package web

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// fakeWorker stands for wallet-worker.js in TestWalletClient: it answers
// the load as the module would, then each call by its name: "echo" with
// its arguments, "refuse" with the module's kind of error, "hang" never,
// and "boom" with an error nothing catches (and no answer).
const fakeWorker = `self.onmessage = (e) => {
  const m = e.data;
  if (m.type === "load") {
    if (m.wasmUrl.endsWith("/broken.wasm")) { self.postMessage({type: "failed", message: "loadWallet: cannot instantiate " + m.wasmUrl}); return; }
    self.postMessage({type: "ready", methods: ["stamp", "echo", "refuse", "hang", "boom"], version: "fake"});
    return;
  }
  switch (m.method) {
    case "stamp": case "echo": self.postMessage({id: m.id, ok: true, value: m.args}); break;
    case "refuse": self.postMessage({id: m.id, ok: false, message: "refuse: unknown key handle", name: "TypeError"}); break;
    case "hang": break;
    case "boom": setTimeout(() => { throw new Error("boom"); }); break;
  }
};`

// TestWalletClient checks wallet.js, the page's client of the module's
// Worker, against a stand-in worker: answers and the module's errors come
// back to the caller as they were (message and kind); a call the worker
// never answers rejects after its timeout instead of waiting for ever; an
// uncaught error in the worker once the module runs leaves the client
// working; a load the worker reports as failed rejects with its reason.
func TestWalletClient(t *testing.T) {
	// Errors logged in the page, counted.
	ctx := moduleTabWith(t, map[string]string{"/js/wallet-worker.js": fakeWorker},
		`globalThis.logged = []; const real = console.error; console.error = (...a) => { logged.push(a.join(" ")); real(...a); };`)
	origin, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.origin`))
	if err != nil {
		t.Fatal(err)
	}

	run := func(js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(async () => {
  const { loadWallet } = await import("/js/wallet.js");
  const settle = (p) => p.then((v) => "ok " + JSON.stringify(v), (e) => "err " + e.name + ": " + e.message);
  `+js+`
})()`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	if got := run(`return settle(loadWallet("/broken.wasm"));`); got != "err Error: loadWallet: cannot instantiate "+origin+"/broken.wasm" {
		t.Errorf("a failed load: %q", got)
	}
	got := run(`const w = await loadWallet("/wallet.wasm", {callTimeoutMs: 300});
  const out = [];
  out.push(await settle(w.echo("h1", {sessionId: "s", n: 2})));
  out.push(await settle(w.refuse("h9")));
  const t0 = performance.now();
  out.push(await settle(w.hang()));
  out.push(performance.now() - t0 >= 250 ? "waited" : "too soon");
  await settle(w.boom());
  await new Promise((r) => setTimeout(r, 50));
  out.push(await settle(w.stamp("h1", "payload")));
  out.push(globalThis.paywallet === w ? "global" : "not global");
  out.push(logged.some((l) => l.includes("uncaught error in its worker")) ? "logged" : "not logged");
  return out.join("\n");`)
	want := strings.Join([]string{
		`ok ["h1",{"sessionId":"s","n":2}]`,
		`err TypeError: refuse: unknown key handle`,
		`err Error: hang: the wallet module did not answer within 0.3 s`,
		`waited`,
		`ok ["h1","payload"]`,
		`global`,
		`logged`,
	}, "\n")
	if got != want {
		t.Errorf("the client:\n%s\nwant\n%s", got, want)
	}
}
