//go:build js && wasm

package main

import "syscall/js"

// method is the Go side of one paywallet method: it receives the call's
// arguments and returns a value that js.ValueOf accepts, or an error whose
// text becomes the rejection reason (after "<method>: ").
type method func(args []js.Value) (any, error)

// promiseFunc wraps m as a JavaScript function that returns a Promise. The
// work runs in a new goroutine, so a method may wait on JavaScript without
// deadlocking the event loop. An error or a panic rejects the Promise with
// new Error("<name>: <reason>"); neither stops the module.
//
// The returned js.Func lives as long as the module and is never released.
func promiseFunc(name string, m method) js.Func {
	return js.FuncOf(func(this js.Value, args []js.Value) any {
		// The executor runs synchronously inside new Promise(...), so it can
		// be released as soon as the constructor returns.
		executor := js.FuncOf(func(this js.Value, settle []js.Value) any {
			resolve, reject := settle[0], settle[1]
			go run(name, m, args, resolve, reject)
			return nil
		})
		defer executor.Release()
		return promiseConstructor.New(executor)
	})
}

var (
	objectConstructor  = js.Global().Get("Object")
	promiseConstructor = js.Global().Get("Promise")
	errorConstructor   = js.Global().Get("Error")
)

// run calls m and settles the Promise through resolve or reject.
func run(name string, m method, args []js.Value, resolve, reject js.Value) {
	defer func() {
		if r := recover(); r != nil {
			reject.Invoke(newError(name, "internal error: "+panicReason(r)))
		}
	}()
	v, err := m(args)
	if err != nil {
		reject.Invoke(newError(name, err.Error()))
		return
	}
	// js.ValueOf panics on a type it cannot convert; the recover above
	// turns that into a rejection as well.
	resolve.Invoke(js.ValueOf(v))
}

// newError returns a JavaScript Error whose message is "<name>: <reason>".
func newError(name, reason string) js.Value {
	return errorConstructor.New(name + ": " + reason)
}

// panicReason describes a recovered panic value without fmt.
func panicReason(r any) string {
	switch v := r.(type) {
	case error:
		return v.Error()
	case string:
		return v
	default:
		return "unexpected panic"
	}
}
