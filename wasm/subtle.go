//go:build js && wasm

package main

import (
	"errors"
	"sync"
	"syscall/js"

	"paywallet/shared/walletcrypto"
)

// This file is the module's only door to the browser's key store,
// crypto.subtle. Every private key is a CryptoKey made here with
// extractable false: WebCrypto does the P-256 arithmetic (natively, in
// constant time) and no script, this module included, can read the key's
// bytes. Go does the protocol around it: formats, checks, HPKE's key
// schedule and AES-GCM over the Diffie-Hellman output.

var (
	uint8Array = js.Global().Get("Uint8Array")
	jsDate     = js.Global().Get("Date")
)

// subtle returns crypto.subtle, or an error where WebCrypto is missing (a
// page that is not a secure context). It is looked up once.
func subtle() (js.Value, error) {
	subtleOnce.Do(func() {
		c := js.Global().Get("crypto")
		switch {
		case c.Type() != js.TypeObject:
			subtleErr = errors.New("this browser has no Web Crypto API")
		case c.Get("subtle").Type() != js.TypeObject:
			subtleErr = errors.New("Web Crypto is only available on https:// pages (or http://localhost)")
		default:
			subtleValue = c.Get("subtle")
		}
	})
	return subtleValue, subtleErr
}

var (
	subtleOnce  sync.Once
	subtleValue js.Value
	subtleErr   error
)

// Algorithm parameters, made once: WebCrypto reads them on each call and
// does not keep them.
var (
	algECDSA     = jsObject("name", "ECDSA", "namedCurve", "P-256")
	algECDH      = jsObject("name", "ECDH", "namedCurve", "P-256")
	algSignP256  = jsObject("name", "ECDSA", "hash", "SHA-256")
	usagesSign   = jsArray("sign")
	usagesDerive = jsArray("deriveBits")
	usagesVerify = jsArray("verify")
	usagesNone   = jsArray()
)

func jsObject(kv ...string) js.Value {
	o := objectConstructor.New()
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i], kv[i+1])
	}
	return o
}

func jsArray(items ...string) js.Value {
	a := js.Global().Get("Array").New()
	for _, s := range items {
		a.Call("push", s)
	}
	return a
}

// awaitPromise blocks the calling goroutine until the Promise p settles
// and returns its value or its rejection as an error. It must not run on
// the JavaScript event loop itself (a js.FuncOf callback): methods run in
// their own goroutines (promise.go), so the loop keeps turning while they
// wait.
func awaitPromise(p js.Value) (js.Value, error) {
	return watch(p)()
}

// watch attaches to p at once (so that a rejection is never unhandled, even
// while the caller waits for another Promise first) and returns the wait.
func watch(p js.Value) func() (js.Value, error) {
	type settled struct {
		v   js.Value
		err error
	}
	ch := make(chan settled, 1)
	onOK := js.FuncOf(func(_ js.Value, a []js.Value) any {
		ch <- settled{v: arg0(a)}
		return nil
	})
	onErr := js.FuncOf(func(_ js.Value, a []js.Value) any {
		ch <- settled{err: jsError(arg0(a))}
		return nil
	})
	p.Call("then", onOK, onErr)
	return func() (js.Value, error) {
		r := <-ch
		onOK.Release()
		onErr.Release()
		return r.v, r.err
	}
}

// awaitBoth waits for two Promises started together, so that WebCrypto
// works on both at once.
func awaitBoth(p, q js.Value) (js.Value, js.Value, error) {
	waitP, waitQ := watch(p), watch(q)
	a, errA := waitP()
	b, errB := waitQ()
	if errA != nil {
		return a, b, errA
	}
	return a, b, errB
}

func arg0(a []js.Value) js.Value {
	if len(a) == 0 {
		return js.Undefined()
	}
	return a[0]
}

// jsError turns a rejection reason into a Go error with its message.
func jsError(v js.Value) error {
	if v.Type() == js.TypeObject {
		if m := v.Get("message"); m.Type() == js.TypeString && m.String() != "" {
			name := v.Get("name")
			if name.Type() == js.TypeString && name.String() != "" && name.String() != "Error" {
				return errors.New(name.String() + ": " + m.String())
			}
			return errors.New(m.String())
		}
	}
	if v.Type() == js.TypeString {
		return errors.New(v.String())
	}
	return errors.New("the browser refused without saying why")
}

// toJS copies b into a new Uint8Array.
func toJS(b []byte) js.Value {
	a := uint8Array.New(len(b))
	js.CopyBytesToJS(a, b)
	return a
}

// fromJS copies an ArrayBuffer (what WebCrypto resolves with) into Go.
func fromJS(buf js.Value) []byte {
	v := uint8Array.New(buf)
	b := make([]byte, v.Length())
	js.CopyBytesToGo(b, v)
	return b
}

// fromJSWipe is fromJS for a secret (a Diffie-Hellman output): the
// JavaScript copy is zeroed once Go has its own, which the caller clears.
func fromJSWipe(buf js.Value) []byte {
	v := uint8Array.New(buf)
	b := make([]byte, v.Length())
	js.CopyBytesToGo(b, v)
	v.Call("fill", 0)
	return b
}

// observe attaches a handler that does nothing to Promises whose outcome
// no longer matters (a call failed before it needed them), so that their
// rejection is not reported as unhandled.
func observe(ps ...js.Value) {
	for _, p := range ps {
		if p.Truthy() {
			p.Call("catch", ignore)
		}
	}
}

var ignore = js.FuncOf(func(js.Value, []js.Value) any { return nil })

// keyPair is a private CryptoKey and its public key.
type keyPair struct {
	private js.Value
	public  *walletcrypto.PublicKey
}

// importPublic starts making a public CryptoKey of pub for alg (algECDH
// with usagesNone for a Diffie-Hellman peer, algECDSA with usagesVerify for
// verifying) and returns its Promise.
func importPublic(s js.Value, pub *walletcrypto.PublicKey, alg js.Value, usages js.Value) (js.Value, error) {
	return subtleCall(s, "importKey", heldStrings.raw, toJS(pub.Uncompressed()), alg, true, usages)
}

// ecdhParams are deriveBits's parameters for the peer's public CryptoKey.
func ecdhParams(peerKey js.Value) js.Value {
	params := objectConstructor.New()
	params.Set("name", "ECDH")
	params.Set("public", peerKey)
	return params
}

// sign returns the DER ECDSA signature of SHA-256(message) by key.
func sign(key js.Value, message []byte) ([]byte, error) {
	s, err := subtle()
	if err != nil {
		return nil, err
	}
	rs, err := awaitPromise(s.Call("sign", algSignP256, key, toJS(message)))
	if err != nil {
		return nil, err
	}
	return walletcrypto.DERFromP1363(fromJS(rs))
}

// deriveX returns the X coordinate of private times peer, where peerKey is
// (a Promise of) peer as an ECDH public CryptoKey.
func deriveX(s, private, peerKey js.Value) ([]byte, error) {
	bits, err := awaitPromise(s.Call("deriveBits", ecdhParams(peerKey), private, 256))
	if err != nil {
		return nil, err
	}
	return fromJSWipe(bits), nil
}

// ecdhKey is a recipient or ephemeral CryptoKey as a walletcrypto.ECDHKey:
// HPKE's one private-key step, done by WebCrypto.
type ecdhKey struct {
	private js.Value
	public  *walletcrypto.PublicKey
}

func (k ecdhKey) PublicKey() *walletcrypto.PublicKey { return k.public }

func (k ecdhKey) ECDH(peer *walletcrypto.PublicKey) ([]byte, error) {
	s, err := subtle()
	if err != nil {
		return nil, err
	}
	imported, err := importPublic(s, peer, algECDH, usagesNone)
	if err != nil {
		return nil, err
	}
	peerKey, err := awaitPromise(imported)
	if err != nil {
		return nil, err
	}
	return deriveX(s, k.private, peerKey)
}

// webCrypto is the module's walletcrypto.Verifier. (Seals get their
// ephemeral key from the flows: precomputed.)
type webCrypto struct{}

// VerifyECDSA checks a DER signature over SHA-256(message) with WebCrypto
// (which accepts high S, as the protocol requires).
func (webCrypto) VerifyECDSA(pub *walletcrypto.PublicKey, message, der []byte) bool {
	rs, err := walletcrypto.P1363FromDER(der)
	if err != nil {
		return false
	}
	s, err := subtle()
	if err != nil {
		return false
	}
	imported, err := importPublic(s, pub, algECDSA, usagesVerify)
	if err != nil {
		return false
	}
	key, err := awaitPromise(imported)
	if err != nil {
		return false
	}
	ok, err := awaitPromise(s.Call("verify", algSignP256, key, toJS(rs), toJS(message)))
	return err == nil && ok.Type() == js.TypeBoolean && ok.Bool()
}

// precomputed is a walletcrypto.KeySource whose one ephemeral key has
// already done its Diffie-Hellman step with peer (sealRound); it refuses
// any other use.
type precomputed struct {
	pub  *walletcrypto.PublicKey
	dh   []byte
	peer *walletcrypto.PublicKey
}

func (p precomputed) GenerateECDH() (walletcrypto.ECDHKey, error) { return p, nil }

func (p precomputed) PublicKey() *walletcrypto.PublicKey { return p.pub }

func (p precomputed) ECDH(peer *walletcrypto.PublicKey) ([]byte, error) {
	if !peer.Equal(p.peer) {
		return nil, errors.New("ephemeral key used with another peer")
	}
	return append([]byte(nil), p.dh...), nil
}

// pkcs8Prefix is the DER of a PKCS#8 PrivateKeyInfo for a P-256 ECDSA key
// (RFC 5208, RFC 5915) up to the 32 bytes of the scalar; the optional
// public key is left out, WebCrypto computes it:
//
//	SEQUENCE { INTEGER 0, SEQUENCE { id-ecPublicKey, prime256v1 },
//	           OCTET STRING { SEQUENCE { INTEGER 1, OCTET STRING (32) d } } }
var pkcs8Prefix = []byte{
	0x30, 0x41, 0x02, 0x01, 0x00,
	0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
	0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07,
	0x04, 0x27, 0x30, 0x25, 0x02, 0x01, 0x01, 0x04, 0x20,
}

// p256Generator is the base point G, uncompressed.
var p256Generator = []byte{
	0x04,
	0x6b, 0x17, 0xd1, 0xf2, 0xe1, 0x2c, 0x42, 0x47, 0xf8, 0xbc, 0xe6, 0xe5, 0x63, 0xa4, 0x40, 0xf2,
	0x77, 0x03, 0x7d, 0x81, 0x2d, 0xeb, 0x33, 0xa0, 0xf4, 0xa1, 0x39, 0x45, 0xd8, 0x98, 0xc2, 0x96,
	0x4f, 0xe3, 0x42, 0xe2, 0xfe, 0x1a, 0x7f, 0x9b, 0x8e, 0xe7, 0xeb, 0x4a, 0x7c, 0x0f, 0x9e, 0x16,
	0x2b, 0xce, 0x33, 0x57, 0x6b, 0x31, 0x5e, 0xce, 0xcb, 0xb6, 0x40, 0x68, 0x37, 0xbf, 0x51, 0xf5,
}

// importScalar turns a 32-byte private scalar (a session key the service
// sealed to us) into a non-extractable ECDSA CryptoKey and zeroes every
// copy of the bytes this module made. WebCrypto cannot tell us the public
// key of a non-extractable key, so it is found without the bytes: the same
// PKCS#8 imported for ECDH against G gives X of d·G, and a test signature
// tells which of the two points with that X it is.
func importScalar(scalar []byte) (keyPair, error) {
	s, err := subtle()
	if err != nil {
		return keyPair{}, err
	}
	if len(scalar) != 32 {
		return keyPair{}, errors.New("a session key must be 32 bytes")
	}
	der := append(append(make([]byte, 0, len(pkcs8Prefix)+32), pkcs8Prefix...), scalar...)
	buf := toJS(der)
	clear(der)
	// importKey copies its input before it returns, so the bytes are wiped
	// from JavaScript memory at once, whatever the Promises do.
	signP := s.Call("importKey", "pkcs8", buf, algECDSA, false, usagesSign)
	dhP := s.Call("importKey", "pkcs8", buf, algECDH, false, usagesDerive)
	buf.Call("fill", 0)
	signKey, dhKey, err := awaitBoth(signP, dhP)
	if err != nil {
		return keyPair{}, errors.New("the session key is not a valid P-256 key: " + err.Error())
	}
	gKey, err := awaitPromise(s.Call("importKey", "raw", toJS(p256Generator), algECDH, true, usagesNone))
	if err != nil {
		return keyPair{}, err
	}
	x, err := deriveX(s, dhKey, gKey)
	if err != nil {
		return keyPair{}, err
	}
	probe := []byte("paywallet: which point is the session key")
	sig, err := sign(signKey, probe)
	if err != nil {
		return keyPair{}, err
	}
	for _, prefix := range []byte{2, 3} {
		pub, err := walletcrypto.ParsePublicKey(append([]byte{prefix}, x...))
		if err != nil {
			return keyPair{}, errors.New("the session key has no valid public key")
		}
		if (webCrypto{}).VerifyECDSA(pub, probe, sig) {
			return keyPair{private: signKey, public: pub}, nil
		}
	}
	return keyPair{}, errors.New("the session key's public key could not be found")
}
