//go:build js && wasm

package main

import "syscall/js"

// version is exposed as paywallet.version. Bump it when the JavaScript API
// changes.
const version = "2.0.0"

func main() {
	start(newKeyStore())
	// Exported functions stop working once main returns: block forever.
	select {}
}

// start publishes globalThis.paywallet and then tells the page, through
// globalThis.paywalletReady(directCalls), that the module is ready. A
// loader that installs the direct calls (direct.go) does it inside that
// call; the object is frozen when it returns.
func start(keys *keyStore) js.Value {
	global := js.Global()
	obj, w := newWallet(keys)
	global.Set("paywallet", obj)
	if ready := global.Get("paywalletReady"); ready.Type() == js.TypeFunction {
		ready.Invoke(directCalls(w))
	}
	return objectConstructor.Call("freeze", obj)
}
