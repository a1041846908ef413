//go:build js && wasm

package main

import (
	"sync"
	"syscall/js"
)

// Flows: the fast way to call WebCrypto.
//
// Entering Go from JavaScript costs more in a wasm module than most
// WebCrypto calls do (some 10 µs each, measured), so the hot calls (stamp,
// generateKey, hpkeSeal, sealOtp) do not run in a goroutine that awaits
// each Promise (promise.go): that takes an entry for the Promise executor
// and one for every settled Promise, plus the goroutine switches. A flow
// method runs its first part synchronously and hands JavaScript a round:
// the WebCrypto Promises that can run at the same time, and the Go step to
// run when all have settled. The method's Promise is that chain itself, so
// a stamp enters Go twice: once to start, once to format.

// A round is WebCrypto work in flight and what to do with its results.
type round struct {
	promises []js.Value
	// next gets the promises' values in order and returns the call's
	// result, an error, or another *round.
	next func(results []js.Value) (any, error)
	// fail prefixes the reason when one of the promises rejects, e.g.
	// "signing failed: ".
	fail string
}

// flows holds the steps of the rounds in flight, by id: a JavaScript
// callback can carry a number but not a Go closure.
var flows struct {
	mu     sync.Mutex
	nextID int
	steps  map[int]flowStep
	onStep js.Func // (id, value) => the next round, the result, or a rejection
	onFail js.Func // (id, reason) => a rejection
}

type flowStep struct {
	name string
	r    *round
}

func init() {
	flows.steps = make(map[int]flowStep)
	flows.onStep = js.FuncOf(func(_ js.Value, a []js.Value) any {
		step, ok := takeStep(a)
		if !ok {
			return js.Undefined()
		}
		results := []js.Value{a[1]}
		if len(step.r.promises) > 1 {
			results = make([]js.Value, len(step.r.promises))
			for i := range results {
				results[i] = a[1].Index(i)
			}
		}
		v, _ := settle(step.name, func() (any, error) { return step.r.next(results) })
		return v
	})
	flows.onFail = js.FuncOf(func(_ js.Value, a []js.Value) any {
		step, ok := takeStep(a)
		if !ok {
			return js.Undefined()
		}
		return promiseConstructor.Call("reject", newError(step.name, step.r.fail+jsError(arg1(a)).Error()))
	})
}

func arg1(a []js.Value) js.Value {
	if len(a) < 2 {
		return js.Undefined()
	}
	return a[1]
}

func takeStep(a []js.Value) (flowStep, bool) {
	if len(a) == 0 || a[0].Type() != js.TypeNumber {
		return flowStep{}, false
	}
	id := a[0].Int()
	flows.mu.Lock()
	defer flows.mu.Unlock()
	s, ok := flows.steps[id]
	delete(flows.steps, id)
	return s, ok
}

// runRound returns the Promise of round r of method name.
func runRound(name string, r *round) js.Value {
	flows.mu.Lock()
	flows.nextID++
	id := flows.nextID
	flows.steps[id] = flowStep{name: name, r: r}
	flows.mu.Unlock()
	var all js.Value
	if len(r.promises) == 1 {
		all = r.promises[0]
	} else {
		arr := arrayConstructor.New(len(r.promises))
		for i, p := range r.promises {
			arr.SetIndex(i, p)
		}
		all = promiseConstructor.Call("all", arr)
	}
	return all.Call("then", flows.onStep.Call("bind", js.Null(), id), flows.onFail.Call("bind", js.Null(), id))
}

// settle runs f, recovering a panic, and turns its outcome into what a
// Promise callback returns: the value, the Promise of the next round, or a
// rejected Promise whose Error is "<name>: <reason>". isPromise tells
// which.
func settle(name string, f func() (any, error)) (out js.Value, isPromise bool) {
	defer func() {
		if r := recover(); r != nil {
			out, isPromise = promiseConstructor.Call("reject", newError(name, "internal error: "+panicReason(r))), true
		}
	}()
	v, err := f()
	if err != nil {
		return promiseConstructor.Call("reject", newError(name, err.Error())), true
	}
	switch v := v.(type) {
	case *round:
		return runRound(name, v), true
	case promise:
		return js.Value(v), true
	}
	return js.ValueOf(v), false
}

// promise is a method's result that is already the Promise of its outcome.
type promise js.Value

// flowFunc wraps a flow method as the JavaScript function the page calls:
// it always returns a Promise.
func flowFunc(name string, m method) js.Func {
	return js.FuncOf(func(_ js.Value, args []js.Value) any {
		v, isPromise := settle(name, func() (any, error) { return m(args) })
		if isPromise {
			return v
		}
		return promiseConstructor.Call("resolve", v)
	})
}

// subtleCall invokes crypto.subtle.<fn>(args...), which returns a Promise
// (WebCrypto reports bad arguments by rejecting it; an exception, from a
// value it cannot even read, becomes the error).
func subtleCall(s js.Value, fn string, args ...any) (js.Value, error) {
	var p js.Value
	if err := catch(func() { p = s.Call(fn, args...) }); err != nil {
		return js.Value{}, err
	}
	return p, nil
}
