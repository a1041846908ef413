//go:build js && wasm

package main

import (
	"sync"
	"syscall/js"
)

// Flows: the fast way to call WebCrypto.
//
// Entering Go from JavaScript through a js.Func costs more in a wasm module
// than most WebCrypto calls do (some 10 to 30 µs each, measured), so the hot
// calls (stamp, generateKey, hpkeSeal, sealOtp) do not run in a goroutine
// that awaits each Promise (promise.go): that takes an entry for the
// Promise executor and one for every settled Promise, plus the goroutine
// switches. A flow method runs its first part synchronously and hands
// JavaScript a round: the WebCrypto Promises that can run at the same time,
// and the Go step to run when all have settled.
//
// A flow is entered in one of two ways. A page whose loader installed the
// direct calls (direct.go, direct.js) enters it through functions the
// module exports, which cost well under a microsecond; any other page, and
// the tests under Node.js, through js.Func wrappers (flowFunc). Both run
// the same steps and see the same outcomes.

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

// An outcome is what one Go step of a flow ends with.
type outcome struct {
	kind outcomeKind
	// value is the Promise of the outcome (promised), the Error (rejected),
	// or the Promise of the round's work (pending).
	value js.Value
	// result is a resolved outcome's value, as the method returned it: the
	// direct calls may hand it over as JSON (direct.go) rather than as a
	// JavaScript value made through syscall/js.
	result any
	// step is the number of the pending round's next step.
	step int
}

// resolvedValue is a resolved outcome's result as a JavaScript value.
func (o outcome) resolvedValue() js.Value {
	return js.ValueOf(o.result)
}

type outcomeKind int

const (
	resolved outcomeKind = iota
	promised
	rejected
	pending
)

// flows holds the steps of the rounds in flight, by number: JavaScript can
// carry a number but not a Go closure.
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
		if len(a) < 2 || a[0].Type() != js.TypeNumber {
			return js.Undefined()
		}
		return viaPromise(stepFlow(a[0].Int(), a[1]))
	})
	flows.onFail = js.FuncOf(func(_ js.Value, a []js.Value) any {
		if len(a) < 2 || a[0].Type() != js.TypeNumber {
			return js.Undefined()
		}
		return viaPromise(failFlow(a[0].Int(), a[1]))
	})
}

// stepFlow runs step id with the value its round's Promise fulfilled with
// (an array of values when the round had several Promises).
func stepFlow(id int, v js.Value) outcome {
	step, ok := takeStep(id)
	if !ok {
		return outcome{kind: resolved, result: js.Undefined()}
	}
	results := []js.Value{v}
	if len(step.r.promises) > 1 {
		results = make([]js.Value, len(step.r.promises))
		for i := range results {
			results[i] = v.Index(i)
		}
	}
	return settle(step.name, func() (any, error) { return step.r.next(results) })
}

// failFlow ends flow step id whose round's Promise rejected with reason.
func failFlow(id int, reason js.Value) outcome {
	step, ok := takeStep(id)
	if !ok {
		return outcome{kind: resolved, result: js.Undefined()}
	}
	return outcome{kind: rejected, value: newError(step.name, step.r.fail+jsError(reason).Error())}
}

func takeStep(id int) (flowStep, bool) {
	flows.mu.Lock()
	defer flows.mu.Unlock()
	s, ok := flows.steps[id]
	delete(flows.steps, id)
	return s, ok
}

// startRound records round r of method name and returns the number of its
// next step and the Promise of its work: the one Promise, or Promise.all.
func startRound(name string, r *round) (int, js.Value) {
	flows.mu.Lock()
	flows.nextID++
	id := flows.nextID
	flows.steps[id] = flowStep{name: name, r: r}
	flows.mu.Unlock()
	if len(r.promises) == 1 {
		return id, r.promises[0]
	}
	arr := arrayConstructor.New(len(r.promises))
	for i, p := range r.promises {
		arr.SetIndex(i, p)
	}
	return id, promiseConstructor.Call("all", arr)
}

// settle runs f, recovering a panic, and describes its outcome: the value,
// a Promise, the next round (recorded), or an Error "<name>: <reason>".
func settle(name string, f func() (any, error)) (out outcome) {
	defer func() {
		if r := recover(); r != nil {
			out = outcome{kind: rejected, value: newError(name, "internal error: "+panicReason(r))}
		}
	}()
	v, err := f()
	if err != nil {
		return outcome{kind: rejected, value: newError(name, err.Error())}
	}
	switch v := v.(type) {
	case *round:
		id, all := startRound(name, v)
		return outcome{kind: pending, value: all, step: id}
	case promise:
		return outcome{kind: promised, value: js.Value(v)}
	}
	if !jsonResult(v) {
		// Converted here, where a value js.ValueOf cannot take becomes a
		// rejection; a JSON-able result converts without fail, later.
		return outcome{kind: resolved, result: js.ValueOf(v)}
	}
	return outcome{kind: resolved, result: v}
}

// viaPromise turns an outcome into what a Promise callback of the js.Func
// path returns: the value, or a Promise (the outcome's own, a rejected one,
// or the round's work chained to its next step).
func viaPromise(o outcome) js.Value {
	switch o.kind {
	case resolved:
		return o.resolvedValue()
	case rejected:
		return promiseConstructor.Call("reject", o.value)
	case pending:
		return o.value.Call("then", flows.onStep.Call("bind", js.Null(), o.step), flows.onFail.Call("bind", js.Null(), o.step))
	}
	return o.value
}

// promise is a method's result that is already the Promise of its outcome.
type promise js.Value

// flowFunc wraps a flow method as the JavaScript function the page calls
// when the direct calls are not installed: it always returns a Promise.
func flowFunc(name string, m method) js.Func {
	return js.FuncOf(func(_ js.Value, args []js.Value) any {
		o := settle(name, func() (any, error) { return m(args) })
		if o.kind == resolved {
			return promiseConstructor.Call("resolve", o.resolvedValue())
		}
		return viaPromise(o)
	})
}

// subtleCall invokes crypto.subtle.<fn>(args...), which returns a Promise
// (WebCrypto reports bad arguments by rejecting it; an exception, from a
// value it cannot even read, becomes the error). The function is bound to
// s once per name, so a call copies no method name across the boundary;
// pass strings that repeat as held values (heldStrings) for the same reason.
func subtleCall(s js.Value, fn string, args ...any) (js.Value, error) {
	f, ok := subtleFuncs[fn]
	if !ok {
		f = s.Get(fn).Call("bind", s)
		subtleFuncs[fn] = f
	}
	var p js.Value
	if err := catch(func() { p = f.Invoke(args...) }); err != nil {
		return js.Value{}, err
	}
	return p, nil
}

// subtleFuncs are crypto.subtle's functions bound to it, by name. (The
// module has one crypto.subtle; the tests' fakes replace it before any
// call.)
var subtleFuncs = map[string]js.Value{}

// heldStrings are JavaScript strings made once. syscall/js decodes a Go
// string into a new JavaScript one on every use; a held js.Value crosses
// as a reference.
var heldStrings = struct {
	raw, privateKey, publicKey js.Value
}{
	raw:        js.ValueOf("raw"),
	privateKey: js.ValueOf("privateKey"),
	publicKey:  js.ValueOf("publicKey"),
}

// property returns o[name] for a held name (heldStrings), without copying
// the name across the boundary as Value.Get does.
func property(o, name js.Value) js.Value {
	return reflectGet.Invoke(o, name)
}

var reflectGet = js.Global().Get("Reflect").Get("get")
