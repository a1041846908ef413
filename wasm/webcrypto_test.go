//go:build js && wasm

package main

// Known-answer tests of the module's WebCrypto layer (subtle.go): the
// package's ecdhKey, webCrypto backend and importScalar over keys imported
// into Node's crypto.subtle as non-extractable PKCS#8, against Turnkey's
// credential-bundle vectors and RFC 9180's P-256 DH step.

import (
	"bytes"
	"crypto/ecdh"
	"encoding/hex"
	"encoding/json"
	"os"
	"syscall/js"
	"testing"

	"paywallet/shared/walletcrypto"
)

// importECDH imports scalar into WebCrypto as a non-extractable ECDH key
// (PKCS#8: pkcs8Prefix || scalar) and wraps it as the package's ecdhKey.
// Its public key is found by importScalar, without the bytes, and checked
// against crypto/ecdh.
func importECDH(t *testing.T, scalar []byte) ecdhKey {
	t.Helper()
	s := subtleOrFatal(t)
	der := append(append([]byte{}, pkcs8Prefix...), scalar...)
	ck, err := awaitPromise(s.Call("importKey", "pkcs8", toJS(der), algECDH, false, usagesDerive))
	if err != nil {
		t.Fatalf("importKey: %v", err)
	}
	if ck.Get("extractable").Bool() || ck.Get("type").String() != "private" {
		t.Fatal("imported key is extractable or not private")
	}
	kp, err := importScalar(append([]byte{}, scalar...))
	if err != nil {
		t.Fatalf("importScalar: %v", err)
	}
	if want := scalarPublic(t, scalar); !kp.public.Equal(want) {
		t.Fatalf("importScalar found %s, crypto/ecdh says %s", kp.public, want)
	}
	return ecdhKey{private: ck, public: kp.public}
}

// fixedWebBackend is the module's webCrypto backend with one fixed
// ephemeral key, a WebCrypto key: for known-answer seals.
type fixedWebBackend struct{ eph ecdhKey }

func (b fixedWebBackend) GenerateECDH() (walletcrypto.ECDHKey, error) { return b.eph, nil }

func (fixedWebBackend) VerifyECDSA(pub *walletcrypto.PublicKey, message, der []byte) bool {
	return webCrypto{}.VerifyECDSA(pub, message, der)
}

// TestTurnkeyCredentialVectorsWebCrypto opens the SDK's credential bundle
// and the fixed-ephemeral oracle vector (wallet-crypto facts §8) with the
// recipient key in WebCrypto, and reproduces the oracle bundle with a
// WebCrypto ephemeral key.
func TestTurnkeyCredentialVectorsWebCrypto(t *testing.T) {
	rcpt := importECDH(t, hexBytes(t, "20fa65df11f24833790ae283fc9a0c215eecbbc589549767977994dc69d05a56"))
	got, err := walletcrypto.OpenCredentialBundle(rcpt, "w99a5xV6A75TfoAUkZn869fVyDYvgVsKrawMALZXmrauZd8hEv66EkPU1Z42CUaHESQjcA5bqd8dynTGBMLWB9ewtXWPEVbZvocB4Tw2K1vQVp7uwjf")
	if err != nil || hex.EncodeToString(got) != "67ee05fc3bdf4161bc70701c221d8d77180294cefcfcea64ba83c4d4c732fcb9" {
		t.Fatalf("SDK bundle: %x, %v", got, err)
	}
	const oracle = "PbHxRnobuyWPSwBkf1aJv2MeGBjXx6BWbGK4D13EvQUJF7Wimv9QThQgKgM2cBuEk1qFnFLkWbvDfiQ5Ce5h34K3G9U9hg4n"
	if got, err := walletcrypto.OpenCredentialBundle(rcpt, oracle); err != nil || string(got) != "turnkey oracle kat" {
		t.Fatalf("oracle bundle: %q, %v", got, err)
	}
	eph := importECDH(t, bytes.Repeat([]byte{0x11}, 32))
	b, err := walletcrypto.SealCredentialBundleWith(fixedWebBackend{eph}, rcpt.PublicKey(), []byte("turnkey oracle kat"))
	if err != nil || b != oracle {
		t.Fatalf("sealed %s, %v; want %s", b, err, oracle)
	}
	// (The module's own seals, each with a fresh WebCrypto key, are
	// TestHpkeSeal's.)
	// A bundle for the key, opened by another, is ErrDecrypt.
	stranger := importECDH(t, newStdECDH(t).k.Bytes())
	if _, err := walletcrypto.OpenCredentialBundle(stranger, oracle); err == nil {
		t.Fatal("a stranger opened the oracle bundle")
	}
}

// TestRFC9180DHWebCrypto: for RFC 9180's P-256 vectors, WebCrypto's
// deriveBits agrees both ways and with crypto/ecdh, and the public halves of
// the imported keys are pkEm and pkRm.
func TestRFC9180DHWebCrypto(t *testing.T) {
	raw, err := os.ReadFile("../shared/walletcrypto/testdata/rfc9180_p256.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct {
		AEAD uint16 `json:"aead_id"`
		SkEm string `json:"skEm"`
		SkRm string `json:"skRm"`
		PkEm string `json:"pkEm"`
		PkRm string `json:"pkRm"`
		Enc  string `json:"enc"`
	}
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) != 2 {
		t.Fatalf("%d vectors, want 2", len(vectors))
	}
	s := subtleOrFatal(t)
	for _, v := range vectors {
		eph := importECDH(t, hexBytes(t, v.SkEm))
		rcpt := importECDH(t, hexBytes(t, v.SkRm))
		if got := eph.PublicKey().UncompressedHex(); got != v.PkEm || v.Enc != v.PkEm {
			t.Fatalf("aead %d: pkEm %s, want %s", v.AEAD, got, v.PkEm)
		}
		if got := rcpt.PublicKey().UncompressedHex(); got != v.PkRm {
			t.Fatalf("aead %d: pkRm %s, want %s", v.AEAD, got, v.PkRm)
		}
		pkEm, err := walletcrypto.ParsePublicKeyHex(v.PkEm)
		if err != nil {
			t.Fatal(err)
		}
		pkRm, err := walletcrypto.ParsePublicKeyHex(v.PkRm)
		if err != nil {
			t.Fatal(err)
		}
		// crypto/ecdh's answer.
		skE, err := ecdh.P256().NewPrivateKey(hexBytes(t, v.SkEm))
		if err != nil {
			t.Fatal(err)
		}
		want, err := stdECDH{skE}.ECDH(pkRm)
		if err != nil {
			t.Fatal(err)
		}
		// deriveBits(skEm, pkRm) and deriveBits(skRm, pkEm), raw.
		derive := func(private js.Value, peer *walletcrypto.PublicKey) []byte {
			t.Helper()
			peerKey, err := awaitImport(s, peer)
			if err != nil {
				t.Fatal(err)
			}
			x, err := deriveX(s, private, peerKey)
			if err != nil {
				t.Fatal(err)
			}
			return x
		}
		ab := derive(eph.private, pkRm)
		ba := derive(rcpt.private, pkEm)
		if !bytes.Equal(ab, want) || !bytes.Equal(ba, want) {
			t.Fatalf("aead %d: deriveBits(skEm, pkRm) %x, deriveBits(skRm, pkEm) %x, crypto/ecdh %x", v.AEAD, ab, ba, want)
		}
		// The same through the package's ecdhKey.
		if got, err := rcpt.ECDH(pkEm); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("aead %d: ecdhKey.ECDH = %x, %v", v.AEAD, got, err)
		}
	}
}

// TestImportScalarPublicKey: importScalar finds the public key of a scalar
// it cannot read back, for both parities of Y, and refuses what is not a
// P-256 scalar.
func TestImportScalarPublicKey(t *testing.T) {
	seen := map[byte]int{}
	for i := 0; i < 16 || seen[2] == 0 || seen[3] == 0; i++ {
		if i > 200 {
			t.Fatal("no key of one of the parities in 200")
		}
		k := newStdECDH(t)
		scalar := k.k.Bytes()
		kp, err := importScalar(scalar)
		if err != nil {
			t.Fatal(err)
		}
		if !kp.public.Equal(k.PublicKey()) {
			t.Fatalf("importScalar: %s, want %s", kp.public, k.PublicKey())
		}
		seen[kp.public.Compressed()[0]]++
		ck := kp.private
		if ck.Get("extractable").Bool() || ck.Get("algorithm").Get("name").String() != "ECDSA" {
			t.Fatal("importScalar made an extractable or non-ECDSA key")
		}
	}
	for _, bad := range [][]byte{nil, make([]byte, 31), make([]byte, 33)} {
		if _, err := importScalar(bad); err == nil || err.Error() != "a session key must be 32 bytes" {
			t.Fatalf("%d bytes: %v", len(bad), err)
		}
	}
	if _, err := importScalar(make([]byte, 32)); err == nil {
		t.Fatal("the zero scalar imported")
	}
}

// TestSessionScalarWipedInJavaScript spies on crypto.subtle.importKey while
// decryptSessionKey runs: the PKCS#8 bytes it hands WebCrypto hold the
// scalar when importKey is called and are all zero once the call is over.
func TestSessionScalarWipedInJavaScript(t *testing.T) {
	client := newKey(t, "recipient")
	defer mustCall(t, "forget", client.handle)
	scalar := newStdECDH(t).k.Bytes()
	bundle := sealScalar(t, client.public, scalar)

	s := subtleOrFatal(t)
	spy := js.Global().Call("eval", `(subtle) => {
		const original = subtle.importKey;
		const seen = [];
		subtle.importKey = function (format, data, ...rest) {
			if (format === "pkcs8") seen.push({data, snapshot: new Uint8Array(data.buffer ? data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) : data)});
			return original.call(subtle, format, data, ...rest);
		};
		return {seen, restore() { delete subtle.importKey; }};
	}`).Invoke(s)
	got := checkKeyResult(t, mustCall(t, "decryptSessionKey", client.handle, bundle), "signing")
	spy.Call("restore")
	defer mustCall(t, "forget", got.handle)
	if s.Call("hasOwnProperty", "importKey").Bool() {
		t.Fatal("spy not removed")
	}

	seen := spy.Get("seen")
	if seen.Length() != 2 {
		t.Fatalf("importKey(pkcs8) called %d times, want 2 (ECDSA and ECDH)", seen.Length())
	}
	want := append(append([]byte{}, pkcs8Prefix...), scalar...)
	for i := range seen.Length() {
		snap := make([]byte, seen.Index(i).Get("snapshot").Length())
		js.CopyBytesToGo(snap, seen.Index(i).Get("snapshot"))
		if !bytes.Equal(snap, want) {
			t.Fatalf("import %d was handed %x, want the PKCS#8 of the scalar", i, snap)
		}
		data := seen.Index(i).Get("data")
		now := make([]byte, data.Length())
		js.CopyBytesToGo(now, data)
		if !bytes.Equal(now, make([]byte, len(now))) {
			t.Fatalf("import %d's buffer still holds %x after the call", i, now)
		}
	}
	// And the key it made is the scalar's.
	if !got.public.Equal(scalarPublic(t, scalar)) {
		t.Fatal("wrong session key")
	}
	payload := "after the wipe"
	verifyStamp(t, mustCall(t, "stamp", got.handle, payload), payload, got.public)
}

// awaitImport imports pub as an ECDH peer's public CryptoKey and waits for it.
func awaitImport(s js.Value, pub *walletcrypto.PublicKey) (js.Value, error) {
	p, err := importPublic(s, pub, algECDH, usagesNone)
	if err != nil {
		return js.Value{}, err
	}
	return awaitPromise(p)
}

// TestGenerateKeyRefused checks what generateKey says when WebCrypto
// refuses to make or export the key, or exports something that is not a
// P-256 point. `make wasm-test` runs it through the js.Func flow and
// through the loader's direct path (direct.js chains the two WebCrypto
// calls itself and enters Go once), which must answer alike.
func TestGenerateKeyRefused(t *testing.T) {
	s := subtleOrFatal(t)
	for _, tt := range []struct {
		method string
		result func() js.Value
		want   string
	}{
		{"generateKey", func() js.Value {
			return promiseConstructor.Call("reject", errorConstructor.New("refused by the test"))
		}, "generateKey: key generation failed: refused by the test"},
		{"exportKey", func() js.Value {
			return promiseConstructor.Call("reject", errorConstructor.New("refused by the test"))
		}, "generateKey: key generation failed: refused by the test"},
		{"exportKey", func() js.Value {
			return promiseConstructor.Call("resolve", uint8Array.New(65).Get("buffer")) // 65 zero bytes: no point
		}, "generateKey: key generation failed: the browser made a key that is not a P-256 point"},
	} {
		stub := js.FuncOf(func(js.Value, []js.Value) any { return tt.result() })
		s.Set(tt.method, stub)         // shadows SubtleCrypto.prototype's method
		delete(subtleFuncs, tt.method) // the flows bind it anew
		for _, purpose := range []string{"signing", "recipient"} {
			wantReject(t, tt.want, "generateKey", purpose)
		}
		s.Delete(tt.method)
		delete(subtleFuncs, tt.method)
		stub.Release()
	}
	// The real methods are back.
	checkKeyResult(t, mustCall(t, "generateKey", "signing"), "signing")
}

// TestHpkeSealRefused checks what hpkeSeal says when WebCrypto refuses one
// of the seal's four calls or exports an ephemeral key that is not a
// point, through the js.Func flow and through the glue's direct path
// (`make wasm-test` runs both), and that a refused seal leaves nothing
// behind.
func TestHpkeSealRefused(t *testing.T) {
	s := subtleOrFatal(t)
	recipient := newStdECDH(t).PublicKey().UncompressedHex()
	refuse := func() js.Value {
		return promiseConstructor.Call("reject", errorConstructor.New("refused by the test"))
	}
	for _, tt := range []struct {
		method string
		result func() js.Value
		want   string
	}{
		{"generateKey", refuse, "hpkeSeal: sealing failed: refused by the test"},
		{"importKey", refuse, "hpkeSeal: sealing failed: refused by the test"},
		{"exportKey", refuse, "hpkeSeal: sealing failed: refused by the test"},
		{"deriveBits", refuse, "hpkeSeal: sealing failed: refused by the test"},
		{"exportKey", func() js.Value {
			return promiseConstructor.Call("resolve", uint8Array.New(65).Get("buffer"))
		}, "hpkeSeal: sealing failed: the browser made a key that is not a P-256 point"},
	} {
		stub := js.FuncOf(func(js.Value, []js.Value) any { return tt.result() })
		s.Set(tt.method, stub)
		delete(subtleFuncs, tt.method)
		wantReject(t, tt.want, "hpkeSeal", recipient, "secret")
		s.Delete(tt.method)
		delete(subtleFuncs, tt.method)
		stub.Release()
	}
	directSeals.Lock()
	left := len(directSeals.m)
	directSeals.Unlock()
	if left != 0 {
		t.Errorf("%d refused seals are still pending", left)
	}
	if v := mustCall(t, "hpkeSeal", recipient, "secret"); v.Get("ciphertext").Type() != js.TypeString {
		t.Errorf("hpkeSeal after the refusals: %s", jsString(v))
	}
}
