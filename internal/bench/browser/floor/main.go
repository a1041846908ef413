//go:build js && wasm

// Command floor is the Go runtime's own load, the reference the browser
// benchmark measures the wallet module's load beside: a module built by the
// same toolchain with the same flags that starts the runtime and says it is
// ready as the wallet module does, and nothing else. What the wallet module
// takes beyond it is ours; what it takes itself no change to our code can
// remove.
//
// It is loaded by the wallet page's own client and worker
// (web/static/js/wallet.js, wallet-worker.js), exactly as the wallet module
// is, so the two loads differ only in the module. The worker accepts a
// module that leaves a globalThis.paywallet with a stamp call behind it, so
// the floor leaves the least such object: a version and a stamp that
// refuses. Making it is one js.FuncOf and one object, microseconds.
package main

import "syscall/js"

func main() {
	refuse := js.FuncOf(func(js.Value, []js.Value) any {
		return js.Global().Get("Promise").Call("reject", js.Global().Get("Error").New("floor: no keys here"))
	})
	w := js.Global().Get("Object").New()
	w.Set("version", "floor")
	w.Set("stamp", refuse)
	js.Global().Set("paywallet", w)
	if ready := js.Global().Get("paywalletReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {}
}
