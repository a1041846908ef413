//go:build js && wasm

package main

import (
	"encoding/hex"
	"errors"
	"sync"
	"syscall/js"

	"paywallet/shared/walletcrypto"
)

// The hot calls, as flows (flow.go): each returns its first round of
// WebCrypto work and the Go steps that follow.

var textEncoder = js.Global().Get("TextEncoder").New()

// utf8Arg returns the UTF-8 bytes of the string v as a Uint8Array made by
// the browser, without copying them through Go, refusing the empty string
// and more than max bytes. (The bytes stay in JavaScript, so a huge string
// costs the page, not the module.)
func utf8Arg(v js.Value, name string, max int) (js.Value, error) {
	if v.Type() != js.TypeString {
		return js.Value{}, errors.New(name + " must be a string, got " + v.Type().String())
	}
	b := bound.encode.Invoke(v)
	switch n := b.Length(); {
	case n == 0:
		return js.Value{}, errors.New(name + " must not be empty")
	case n > max:
		return js.Value{}, tooLong(name, max)
	}
	return b, nil
}

// generateKey(purpose = "signing") -> {handle, publicKey,
// publicKeyUncompressed, purpose}
//
// Two rounds: crypto.subtle.generateKey (non-extractable), then the export
// of the public half, which is always extractable.
func (w *wallet) generateKey(args []js.Value) (any, error) {
	if len(args) > 1 {
		return nil, checkCount(args, "purpose")
	}
	p := purposeSigning
	if len(args) == 1 && !args[0].IsUndefined() {
		var err error
		if p, err = purposeArg(args[0]); err != nil {
			return nil, err
		}
	}
	s, err := subtle()
	if err != nil {
		return nil, err
	}
	alg, usages := algECDSA, usagesSign
	if p == purposeRecipient {
		alg, usages = algECDH, usagesDerive
	}
	gen, err := subtleCall(s, "generateKey", alg, false, usages)
	if err != nil {
		return nil, errors.New("key generation failed: " + err.Error())
	}
	const fail = "key generation failed: "
	return &round{promises: []js.Value{gen}, fail: fail, next: func(r []js.Value) (any, error) {
		private := property(r[0], heldStrings.privateKey)
		export, err := subtleCall(s, "exportKey", heldStrings.raw, property(r[0], heldStrings.publicKey))
		if err != nil {
			return nil, errors.New(fail + err.Error())
		}
		return &round{promises: []js.Value{export}, fail: fail, next: func(r []js.Value) (any, error) {
			pub, err := walletcrypto.ParsePublicKey(fromJS(r[0]))
			if err != nil {
				return nil, errors.New(fail + "the browser made a key that is not a P-256 point")
			}
			return w.keep(&key{private: private, public: pub, purpose: p})
		}}, nil
	}}, nil
}

var jsPurposes = struct{ signing, recipient js.Value }{js.ValueOf("signing"), js.ValueOf("recipient")}

// purposeArg reads "signing" or "recipient".
func purposeArg(v js.Value) (purpose, error) {
	// A held string compares by reference (syscall/js gives equal strings
	// one reference while one is held) without being copied into Go.
	switch {
	case v.Equal(jsPurposes.signing):
		return purposeSigning, nil
	case v.Equal(jsPurposes.recipient):
		return purposeRecipient, nil
	}
	if v.Type() == js.TypeString {
		switch v.String() {
		case "signing":
			return purposeSigning, nil
		case "recipient":
			return purposeRecipient, nil
		}
	}
	return 0, errors.New(`purpose must be "signing" or "recipient"`)
}

// stamp(handle, payload) -> Service-Wallet-Signature header value
//
// crypto.subtle.sign over the payload's UTF-8 bytes (WebCrypto hashes with
// SHA-256), chained straight to the key's own finisher, which turns r || s
// into DER and the stamp JSON in Go. It is the hottest call, so it skips
// the flow machinery: no step to record, nothing to bind per call. (With
// the direct calls installed, direct.go's paywallet_stamp is the same
// call without the js.Func entries.)
func (w *wallet) stamp(args []js.Value) (any, error) {
	if err := checkCount(args, "handle", "payload"); err != nil {
		return nil, err
	}
	handle, err := handleArg(args[0])
	if err != nil {
		return nil, err
	}
	payload, err := utf8Arg(args[1], "payload", maxPayload)
	if err != nil {
		return nil, err
	}
	sig, k, err := w.signPayload(handle, payload)
	if err != nil {
		return nil, err
	}
	finish, fail := k.stamper()
	return promise(bound.then.Invoke(sig, finish, fail)), nil
}

// signPayload starts crypto.subtle.sign of payload (a Uint8Array already
// checked for size) with the signing key behind handle, and counts the
// stamp as under way for the key's finisher, which must end it.
func (w *wallet) signPayload(handle string, payload js.Value) (js.Value, *key, error) {
	k, err := w.keys.get(handle, purposeSigning)
	if err != nil {
		return js.Value{}, nil, err
	}
	if _, err := subtle(); err != nil {
		return js.Value{}, nil, err
	}
	id := k.stampID()
	var sig js.Value
	if err := catch(func() { sig = bound.sign.Invoke(algSignP256, k.private, payload) }); err != nil {
		return js.Value{}, nil, errors.New("signing failed: " + err.Error())
	}
	stampKeys.begin(id)
	return sig, k, nil
}

// stampID returns the key's number in stampKeys, given on its first stamp.
func (k *key) stampID() int {
	k.once.Do(func() { k.id = stampKeys.add(k.public) })
	return k.id
}

// stamper returns the key's finisher and failure handler for the js.Func
// path, stampFinish and stampFailed bound to the key's number, made on
// first use.
func (k *key) stamper() (finish, fail js.Value) {
	if !k.finish.Truthy() {
		id := k.stampID()
		k.finish = stampFinish.Call("bind", js.Null(), id)
		k.fail = stampFailed.Call("bind", js.Null(), id)
	}
	return k.finish, k.fail
}

// finishStamp ends a stamp of key number id with the browser's r || s and
// appends the header value to dst.
func finishStamp(dst []byte, id int, rs []byte) ([]byte, error) {
	pub := stampKeys.end(id)
	if pub == nil {
		return nil, errUnknownHandle
	}
	der, err := walletcrypto.DERFromP1363(rs)
	if err != nil {
		return nil, errors.New("signing failed: the browser's signature is malformed")
	}
	return (&walletcrypto.Stamp{PublicKey: pub, Scheme: walletcrypto.StampScheme, Signature: der}).AppendEncode(dst), nil
}

// stampRefused ends a stamp of key number id whose signing the browser
// refused, and returns the Error the call rejects with.
func stampRefused(id int, reason js.Value) js.Value {
	stampKeys.end(id)
	return newError("stamp", "signing failed: "+jsError(reason).Error())
}

// release lets the key's finisher go when the key is dropped; a stamp
// already signing still finishes with it.
func (k *key) release() {
	if k.id != 0 {
		stampKeys.release(k.id)
	}
}

// stampKeys are the public keys of the keys that have stamped, by number:
// what a finisher needs, reachable from a number JavaScript can carry. An
// entry lives while its key does or a stamp of it is under way.
var stampKeys = stampTable{entries: make(map[int]*stampEntry)}

type stampTable struct {
	mu      sync.Mutex
	next    int
	entries map[int]*stampEntry
}

type stampEntry struct {
	pub      *walletcrypto.PublicKey
	inFlight int
	released bool
}

func (t *stampTable) add(pub *walletcrypto.PublicKey) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	t.entries[t.next] = &stampEntry{pub: pub}
	return t.next
}

func (t *stampTable) begin(id int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.entries[id]; e != nil {
		e.inFlight++
	}
}

// end closes one stamp of id and returns the key's public key.
func (t *stampTable) end(id int) *walletcrypto.PublicKey {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entries[id]
	if e == nil {
		return nil
	}
	e.inFlight--
	if e.released && e.inFlight <= 0 {
		delete(t.entries, id)
	}
	return e.pub
}

func (t *stampTable) release(id int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.entries[id]; e != nil {
		e.released = true
		if e.inFlight <= 0 {
			delete(t.entries, id)
		}
	}
}

var (
	// stampFinish(keyNumber, r||s ArrayBuffer) -> the header value.
	stampFinish = js.FuncOf(func(_ js.Value, a []js.Value) any {
		if len(a) < 2 || a[0].Type() != js.TypeNumber {
			return promiseConstructor.Call("reject", newError("stamp", "internal error: bad finisher call"))
		}
		return viaPromise(settle("stamp", func() (any, error) {
			v, err := finishStamp(nil, a[0].Int(), fromJS(a[1]))
			return string(v), err
		}))
	})
	// stampFailed(keyNumber, reason) -> a rejection naming the browser's
	// reason.
	stampFailed = js.FuncOf(func(_ js.Value, a []js.Value) any {
		if len(a) < 2 || a[0].Type() != js.TypeNumber {
			return promiseConstructor.Call("reject", newError("stamp", "internal error: bad finisher call"))
		}
		return promiseConstructor.Call("reject", stampRefused(a[0].Int(), a[1]))
	})
)

// bound holds the built-in functions the hot path calls, bound once, so
// that a call needs no method name copied across the boundary:
// bound.then.Invoke(p, a, b) is p.then(a, b).
var bound = func() (b struct{ sign, then, encode js.Value }) {
	call := js.Global().Get("Function").Get("prototype").Get("call")
	b.then = call.Call("bind", promiseConstructor.Get("prototype").Get("then"))
	b.encode = textEncoder.Get("encode").Call("bind", textEncoder)
	if c := js.Global().Get("crypto"); c.Type() == js.TypeObject {
		if s := c.Get("subtle"); s.Type() == js.TypeObject {
			b.sign = s.Get("sign").Call("bind", s)
		}
	}
	return b
}()

// hpkeSeal(recipientPublicKeyHex, plaintext) -> {encappedPublic, ciphertext}
//
// It seals plaintext to a public key with the bundle suite and uses no key
// of the store, so it adds nothing to the trust boundary; it is a plain
// function rather than a wallet method to make that visible. The wallet
// itself seals only through sealOtp; hpkeSeal exists so that the browser
// benchmark can time a bare seal beside JavaScript HPKE.
func hpkeSeal(args []js.Value) (any, error) {
	recipient, plaintext, err := sealArgs(args)
	if err != nil {
		return nil, err
	}
	return sealRound(recipient, nil, func(enc, ct []byte, _ []js.Value) (any, error) {
		return sealResult(enc, ct), nil
	}, plaintext)
}

// sealArgs reads hpkeSeal's arguments: the recipient's public key (hex) and
// the plaintext (a string, sealed as its UTF-8 bytes).
func sealArgs(args []js.Value) (*walletcrypto.PublicKey, []byte, error) {
	if err := checkCount(args, "recipientPublicKeyHex", "plaintext"); err != nil {
		return nil, nil, err
	}
	hexKey, err := stringArg(args[0], "recipientPublicKeyHex", maxKeyHex, true)
	if err != nil {
		return nil, nil, err
	}
	recipient, err := walletcrypto.ParsePublicKeyHex(hexKey)
	if err != nil {
		return nil, nil, errors.New("recipientPublicKeyHex is not a P-256 public key in hex")
	}
	plaintext, err := stringArg(args[1], "plaintext", maxBundle, false)
	if err != nil {
		return nil, nil, err
	}
	return recipient, []byte(plaintext), nil
}

// sealResult is what hpkeSeal resolves with.
func sealResult(enc, ct []byte) map[string]any {
	return map[string]any{
		"encappedPublic": hex.EncodeToString(enc),
		"ciphertext":     hex.EncodeToString(ct),
	}
}

// sealOtp(handle, code, bundle, pinnedSignerHex) -> JSON HPKE form string
//
// The target bundle's signature is checked by WebCrypto in the same rounds
// as the seal's key agreement, and nothing sealed leaves the module unless
// it verified.
func (w *wallet) sealOtp(args []js.Value) (any, error) {
	if err := checkCount(args, "handle", "code", "bundle", "pinnedSignerHex"); err != nil {
		return nil, err
	}
	handle, err := handleArg(args[0])
	if err != nil {
		return nil, err
	}
	if args[1].Type() != js.TypeString {
		return nil, errors.New("code must be a string, got " + args[1].Type().String())
	}
	code := args[1].String()
	if !validOTPCode(code) {
		return nil, errors.New("code must be 1 to 64 printable ASCII characters without spaces")
	}
	bundle, err := stringArg(args[2], "bundle", maxBundle, true)
	if err != nil {
		return nil, err
	}
	signer, err := signerArg(args[3])
	if err != nil {
		return nil, err
	}
	client, err := w.keys.get(handle, purposeSigning)
	if err != nil {
		return nil, err
	}
	tb, err := walletcrypto.ParseTargetBundle(bundle)
	if err != nil {
		return nil, bundleError("target bundle", err)
	}
	if !tb.EnclaveQuorumPublic.Equal(signer) {
		return nil, bundleError("target bundle", walletcrypto.ErrSignerMismatch)
	}
	rs, err := walletcrypto.P1363FromDER(tb.DataSignature)
	if err != nil {
		return nil, bundleError("target bundle", err)
	}
	s, err := subtle()
	if err != nil {
		return nil, err
	}
	signerKey, err := importPublic(s, signer, algECDSA, usagesVerify)
	if err != nil {
		return nil, err
	}
	// The verification rides along: imported in the first round, checked
	// in the second, its answer read before the sealed bundle is released.
	verify := func(r []js.Value) (js.Value, error) {
		return subtleCall(s, "verify", algSignP256, r[0], toJS(rs), toJS(tb.Data))
	}
	plaintext := walletcrypto.OTPPlaintext(code, client.public.UncompressedHex())
	out, err := sealRound(tb.TargetPublic, &sideTask{first: signerKey, second: verify}, func(enc, ct []byte, side []js.Value) (any, error) {
		if ok := side[0]; ok.Type() != js.TypeBoolean || !ok.Bool() {
			return nil, bundleError("target bundle", walletcrypto.ErrInvalidSignature)
		}
		return walletcrypto.Bundle{EncappedPublic: enc, Ciphertext: ct}.Encode(), nil
	}, plaintext)
	if err != nil {
		observe(signerKey)
	}
	return out, err
}

// sideTask is WebCrypto work done alongside a seal's two rounds: first is
// a Promise started with the first round, second makes a Promise from its
// value for the second round.
type sideTask struct {
	first  js.Value
	second func(first []js.Value) (js.Value, error)
}

// sealRound seals plaintext to recipient in two rounds of WebCrypto work
// (an ephemeral ECDH key and the recipient's public CryptoKey; then the
// ephemeral public key's export and the Diffie-Hellman step) and hands the
// encapsulated key and ciphertext, with the side task's result, to finish.
// The HPKE itself is walletcrypto.SealWith, given the finished DH output.
func sealRound(recipient *walletcrypto.PublicKey, side *sideTask, finish func(enc, ct []byte, side []js.Value) (any, error), plaintext []byte) (any, error) {
	const fail = "sealing failed: "
	s, err := subtle()
	if err != nil {
		return nil, err
	}
	gen, err := subtleCall(s, "generateKey", algECDH, false, usagesDerive)
	if err != nil {
		return nil, errors.New(fail + err.Error())
	}
	peer, err := importPublic(s, recipient, algECDH, usagesNone)
	if err != nil {
		return nil, errors.New(fail + err.Error())
	}
	first := []js.Value{gen, peer}
	if side != nil {
		first = append(first, side.first)
	}
	return &round{promises: first, fail: fail, next: func(r []js.Value) (any, error) {
		pair, peerKey := r[0], r[1]
		export, err := subtleCall(s, "exportKey", heldStrings.raw, property(pair, heldStrings.publicKey))
		if err != nil {
			return nil, errors.New(fail + err.Error())
		}
		bits, err := subtleCall(s, "deriveBits", ecdhParams(peerKey), property(pair, heldStrings.privateKey), 256)
		if err != nil {
			observe(export)
			return nil, errors.New(fail + err.Error())
		}
		second := []js.Value{export, bits}
		if side != nil {
			p, err := side.second(r[2:])
			if err != nil {
				observe(export, bits)
				return nil, errors.New(fail + err.Error())
			}
			second = append(second, p)
		}
		return &round{promises: second, fail: fail, next: func(r []js.Value) (any, error) {
			pub, err := walletcrypto.ParsePublicKey(fromJS(r[0]))
			if err != nil {
				return nil, errors.New(fail + "the browser made a key that is not a P-256 point")
			}
			dh := fromJSWipe(r[1])
			defer clear(dh)
			enc, ct, err := walletcrypto.SealWith(precomputed{pub: pub, dh: dh, peer: recipient}, recipient, plaintext)
			if err != nil {
				return nil, errors.New(fail + cryptoReason(err))
			}
			return finish(enc, ct, r[2:])
		}}, nil
	}}, nil
}
