//go:build js && wasm

package main

import (
	"errors"
	"strconv"
	"sync"
	"syscall/js"
	"unsafe"

	"paywallet/shared/walletcrypto"
)

// Direct calls: the page enters the module through functions it exports
// (go:wasmexport) instead of js.Func wrappers.
//
// A js.Func entry resumes the Go scheduler, switches goroutines and copies
// the arguments through syscall/js: some 10 to 30 µs in Chromium, more
// than a WebCrypto signature takes. An exported function is a plain wasm
// call (well under a microsecond), so the hot calls' Go steps run as
// exports and the few values they exchange with JavaScript go through two
// places the loader's glue (web/static/js/direct.js) shares with the module:
//
//   - io, a two-slot JavaScript array: io[0] is what JavaScript hands in
//     (a call's arguments, a settled Promise's value or reason, a payload),
//     io[1] what Go hands back (a result, an Error, a Promise);
//   - scratch, bytes in wasm memory, for the strings of the hottest call,
//     stamp: the handle in, the header value out, without a TextEncoder or
//     TextDecoder crossing per string.
//
// An exported Go function must not block (there is no event loop to wait
// on inside it): the flow steps never do, and no lock they take is held
// across a wait anywhere in the module.
//
// The loader installs the glue from inside paywalletReady, before the
// module freezes globalThis.paywallet (main.go); a page whose loader does
// not, keeps the js.Func methods, which do the same work.

// Return codes of the exported steps. A code of 1 or more is the number of
// the next step: io[1] is the Promise of the round's work, and JavaScript
// calls paywallet_step with its value or paywallet_fail with its reason.
const (
	directResolved int32 = -1 // io[1] is the result
	directPromised int32 = -2 // io[1] is the Promise of the outcome
	directRejected int32 = -3 // io[1] is the Error to reject with
	// directJSON - n: the result is the JSON text in the first n bytes of
	// scratch, all ASCII. Making a result object through syscall/js costs
	// a TextDecoder call per property name and per string, and a finalizer
	// per reference; JSON.parse of a few hundred bytes costs far less.
	directJSON int32 = -16
)

// directProtocol is the version of this exchange; the glue refuses
// another (DIRECT_PROTOCOL in direct.js).
const directProtocol = 1

// scratchSize bounds what goes through scratch: a handle in, a stamp out
// (about 360 bytes), a result's JSON (a sealed OTP bundle is about 600).
const scratchSize = 2048

var (
	io          = arrayConstructor.New(2)
	scratch     [scratchSize]byte
	directFlows []flowMethod
)

// flowMethod is one method entered through paywallet_call, by index.
type flowMethod struct {
	name string
	fn   method
}

// directCalls makes w the wallet of the direct calls and describes them
// to the loader's glue: the io array, the flow methods by number, and the
// size of scratch.
func directCalls(w *wallet) js.Value {
	directWallet = w
	methods := w.flowMethods()
	directFlows = methods
	names := arrayConstructor.New(len(methods))
	for i, m := range methods {
		names.SetIndex(i, m.name)
	}
	o := objectConstructor.New()
	o.Set("io", io)
	o.Set("methods", names)
	o.Set("scratchSize", scratchSize)
	o.Set("protocol", directProtocol)
	return o
}

// handOut puts an outcome in io[1], or a result in scratch as JSON, and
// returns its code.
func handOut(o outcome) int32 {
	if o.kind == resolved {
		if n, ok := scratchJSON(o.result); ok {
			return directJSON - int32(n)
		}
		io.SetIndex(1, o.resolvedValue())
		return directResolved
	}
	io.SetIndex(1, o.value)
	switch o.kind {
	case promised:
		return directPromised
	case rejected:
		return directRejected
	}
	return int32(o.step)
}

// directScratch returns the address of scratch in wasm memory.
//
//go:wasmexport paywallet_scratch
func directScratch() int32 {
	return int32(uintptr(unsafe.Pointer(&scratch[0])))
}

// directCall runs flow method number m with the arguments in io[0] (an
// array).
//
//go:wasmexport paywallet_call
func directCall(m int32) int32 {
	if m < 0 || int(m) >= len(directFlows) {
		return directReject("paywallet", errors.New("internal error: no method number "+strconv.Itoa(int(m))))
	}
	fm := directFlows[m]
	a := io.Index(0)
	args := make([]js.Value, a.Length())
	for i := range args {
		args[i] = a.Index(i)
	}
	return handOut(settle(fm.name, func() (any, error) { return fm.fn(args) }))
}

// directStep runs step id with the value in io[0].
//
//go:wasmexport paywallet_step
func directStep(id int32) int32 {
	return handOut(stepFlow(int(id), io.Index(0)))
}

// directFail ends step id, whose round rejected with the reason in io[0].
//
//go:wasmexport paywallet_fail
func directFail(id int32) int32 {
	return handOut(failFlow(int(id), io.Index(0)))
}

// directWallet is the wallet the direct stamp signs for (directCalls).
var directWallet *wallet

// directStamp begins stamp(handle, payload): the handle's bytes are the
// first handleLen of scratch, the payload's UTF-8 bytes a Uint8Array of
// payloadLen bytes in io[0]. It returns the key's number with the Promise
// of the signature in io[1], for paywallet_stamp_finish or
// paywallet_stamp_failed, or directRejected.
//
//go:wasmexport paywallet_stamp
func directStamp(handleLen, payloadLen int32) int32 {
	fail := func(err error) int32 { return directReject("stamp", err) }
	if handleLen < 0 || handleLen > scratchSize {
		return fail(errBadHandle)
	}
	handle := string(scratch[:handleLen])
	if !validHandle(handle) {
		return fail(errBadHandle)
	}
	switch {
	case payloadLen <= 0:
		return fail(errors.New("payload must not be empty"))
	case payloadLen > maxPayload:
		return fail(tooLong("payload", maxPayload))
	}
	sig, k, err := directWallet.signPayload(handle, io.Index(0))
	if err != nil {
		return fail(err)
	}
	io.SetIndex(1, sig)
	return int32(k.stampID())
}

// directStampFinish ends a stamp of key number id with the browser's
// r || s, the first sigLen bytes of scratch, and writes the header value
// over them; it returns the value's length or directRejected.
//
//go:wasmexport paywallet_stamp_finish
func directStampFinish(id, sigLen int32) (n int32) {
	defer func() {
		if r := recover(); r != nil {
			n = directReject("stamp", errors.New("internal error: "+panicReason(r)))
		}
	}()
	if sigLen < 0 || sigLen > maxSignature {
		sigLen = 0 // refused as malformed
	}
	// The signature is read before the stamp is written over it.
	var rs [maxSignature]byte
	copy(rs[:], scratch[:sigLen])
	v, err := finishStamp(scratch[:0], int(id), rs[:sigLen])
	if err == nil && (len(v) == 0 || &v[0] != &scratch[0]) {
		err = errors.New("internal error: the stamp does not fit the scratch buffer")
	}
	if err != nil {
		return directReject("stamp", err)
	}
	return int32(len(v))
}

// maxSignature bounds the r || s the glue hands in: 64 bytes for P-256;
// anything longer is refused as malformed.
const maxSignature = 132

// directReject puts the Error "<name>: <reason>" in io[1].
func directReject(name string, err error) int32 {
	return handOut(outcome{kind: rejected, value: newError(name, err.Error())})
}

// directKeep ends generateKey when the glue has made the key itself: it
// asked WebCrypto for the pair and the raw public key, the same two calls
// as the generateKey flow (fast.go), without entering Go between them. The
// private CryptoKey is in io[0], the public key's rawLen bytes are the
// start of scratch, purposeCode is 0 for "signing" and 1 for "recipient"
// (the glue took the argument apart only when it is one of those). The
// key's description comes back as JSON in scratch.
//
// One entry instead of three (the call and two steps): each step made a
// round of Promise.all, several js.Values with finalizers and string
// crossings, which cost as much as WebCrypto's own key generation.
//
//go:wasmexport paywallet_keep
func directKeep(purposeCode, rawLen int32) int32 {
	return handOut(settle("generateKey", func() (any, error) {
		const fail = "key generation failed: "
		var p purpose
		switch purposeCode {
		case 0:
			p = purposeSigning
		case 1:
			p = purposeRecipient
		default:
			return nil, errors.New("internal error: no purpose number " + strconv.Itoa(int(purposeCode)))
		}
		if rawLen < 0 || rawLen > scratchSize {
			rawLen = 0 // refused below
		}
		pub, err := walletcrypto.ParsePublicKey(scratch[:rawLen])
		if err != nil {
			return nil, errors.New(fail + "the browser made a key that is not a P-256 point")
		}
		private := io.Index(0)
		if private.Type() != js.TypeObject {
			return nil, errors.New(fail + "the browser made no private key")
		}
		return directWallet.keep(&key{private: private, public: pub, purpose: p})
	}))
}

// directKeygenFailed ends generateKey whose key generation or export the
// browser refused with the reason in io[0]: the rejection says what the
// flow's would.
//
//go:wasmexport paywallet_keygen_failed
func directKeygenFailed() int32 {
	return directReject("generateKey", errors.New("key generation failed: "+jsError(io.Index(0)).Error()))
}

// hpkeSeal through the glue: paywallet_seal_begin checks the arguments
// (io[0], as for paywallet_call) and puts the recipient's uncompressed key
// in scratch; the glue then does the seal's two rounds of WebCrypto work
// (an ephemeral ECDH pair and the recipient's CryptoKey; the pair's raw
// public key and the Diffie-Hellman bits), the same calls as sealRound
// (fast.go), and paywallet_seal_finish does the HPKE itself with the
// public key and the shared secret from scratch. Go is entered twice
// instead of three times, and neither entry makes a Promise, a CryptoKey
// reference or an ArrayBuffer copy through syscall/js.

// directSeals are the seals begun and not yet finished, by number.
var directSeals = struct {
	sync.Mutex
	next int32
	m    map[int32]pendingSeal
}{m: map[int32]pendingSeal{}}

type pendingSeal struct {
	recipient *walletcrypto.PublicKey
	plaintext []byte
}

// directSealBegin returns the number of a new seal, with the recipient's
// 65-byte key at the start of scratch, or directRejected.
//
//go:wasmexport paywallet_seal_begin
func directSealBegin() (code int32) {
	defer func() {
		if r := recover(); r != nil {
			code = directReject("hpkeSeal", errors.New("internal error: "+panicReason(r)))
		}
	}()
	a := io.Index(0)
	args := make([]js.Value, a.Length())
	for i := range args {
		args[i] = a.Index(i)
	}
	recipient, plaintext, err := sealArgs(args)
	if err != nil {
		return directReject("hpkeSeal", err)
	}
	directSeals.Lock()
	for {
		directSeals.next++
		if directSeals.next <= 0 {
			directSeals.next = 1
		}
		if _, busy := directSeals.m[directSeals.next]; !busy {
			break
		}
	}
	id := directSeals.next
	directSeals.m[id] = pendingSeal{recipient: recipient, plaintext: plaintext}
	directSeals.Unlock()
	copy(scratch[:65], recipient.Uncompressed())
	return id
}

// takeSeal removes seal id from directSeals and returns it.
func takeSeal(id int32) (pendingSeal, bool) {
	directSeals.Lock()
	defer directSeals.Unlock()
	s, ok := directSeals.m[id]
	delete(directSeals.m, id)
	return s, ok
}

// directSealFinish ends seal id: the ephemeral public key is the first
// pubLen bytes of scratch, the Diffie-Hellman output the dhLen after them
// (wiped once read). The result comes back as JSON in scratch, or in io[1].
//
//go:wasmexport paywallet_seal_finish
func directSealFinish(id, pubLen, dhLen int32) int32 {
	const fail = "sealing failed: "
	if pubLen < 0 || dhLen < 0 || int(pubLen)+int(dhLen) > scratchSize {
		pubLen, dhLen = 0, 0 // refused below
	}
	dh := append([]byte(nil), scratch[pubLen:pubLen+dhLen]...)
	clear(scratch[pubLen : pubLen+dhLen])
	defer clear(dh)
	ps, ok := takeSeal(id)
	if !ok {
		return directReject("hpkeSeal", errors.New("internal error: no seal number "+strconv.Itoa(int(id))))
	}
	return handOut(settle("hpkeSeal", func() (any, error) {
		pub, err := walletcrypto.ParsePublicKey(scratch[:pubLen])
		if err != nil {
			return nil, errors.New(fail + "the browser made a key that is not a P-256 point")
		}
		enc, ct, err := walletcrypto.SealWith(precomputed{pub: pub, dh: dh, peer: ps.recipient}, ps.recipient, ps.plaintext)
		if err != nil {
			return nil, errors.New(fail + cryptoReason(err))
		}
		return sealResult(enc, ct), nil
	}))
}

// directSealFailed ends seal id, whose WebCrypto work the browser refused
// with the reason in io[0].
//
//go:wasmexport paywallet_seal_failed
func directSealFailed(id int32) int32 {
	takeSeal(id)
	return directReject("hpkeSeal", errors.New("sealing failed: "+jsError(io.Index(0)).Error()))
}

// directStampFailed ends a stamp of key number id whose signing the
// browser refused with the reason in io[0]; io[1] is the Error.
//
//go:wasmexport paywallet_stamp_failed
func directStampFailed(id int32) int32 {
	return handOut(outcome{kind: rejected, value: stampRefused(int(id), io.Index(0))})
}
