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
// globalThis.paywalletReady, that the module is ready.
func start(keys *keyStore) {
	global := js.Global()
	global.Set("paywallet", newWallet(keys))
	if ready := global.Get("paywalletReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
}
