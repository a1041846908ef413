//go:build js && wasm

// Command floor is the Go runtime's own cold load, the reference the
// browser benchmark measures the wallet module's cold load beside: a
// module built by the same toolchain with the same flags that starts the
// runtime and, as the wallet module does when it is ready, calls
// globalThis.paywalletReady, and nothing else. What the wallet module
// takes beyond it is ours; what it takes itself no change to our code can
// remove.
package main

import "syscall/js"

func main() {
	if ready := js.Global().Get("paywalletReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {}
}
