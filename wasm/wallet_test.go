//go:build js && wasm

package main

// These tests run under Node (go_js_wasm_exec) and go through the real
// JavaScript surface: they call globalThis.paywallet.<method>(...) and await
// the returned Promise. Awaiting works because the test goroutine is not a
// js.FuncOf callback: while it blocks on a channel the JavaScript event loop
// runs and settles the Promise.
//
//	PATH="$(go env GOROOT)/lib/wasm:$PATH" GOOS=js GOARCH=wasm go test ./wasm/

import (
	"bytes"
	"encoding/hex"
	"errors"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"syscall/js"
	"testing"
	"time"

	"paywallet/shared/walletcrypto"
)

var (
	testKeys   *keyStore // the store behind globalThis.paywallet
	readyCalls int       // how often start called globalThis.paywalletReady
)

func TestMain(m *testing.M) {
	ready := js.FuncOf(func(js.Value, []js.Value) any {
		readyCalls++
		return nil
	})
	js.Global().Set("paywalletReady", ready)
	testKeys = newKeyStore()
	start(testKeys)
	js.Global().Delete("paywalletReady")
	ready.Release()
	os.Exit(m.Run())
}

// rejection is a rejected Promise's reason.
type rejection struct{ message string }

func (r *rejection) Error() string { return r.message }

// await waits for p to settle. It returns the fulfilment value, or a
// *rejection carrying the message of the Error p was rejected with. It fails
// the test if p is not a Promise, if it is rejected with something other
// than an Error, or if it does not settle within 30 seconds.
func await(t *testing.T, p js.Value) (js.Value, error) {
	t.Helper()
	if !p.InstanceOf(js.Global().Get("Promise")) {
		t.Fatalf("got %s, want a Promise", p.Type())
	}
	type settled struct {
		v        js.Value
		rejected bool
	}
	ch := make(chan settled, 1)
	onFulfilled := js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- settled{v: args[0]}
		return nil
	})
	defer onFulfilled.Release()
	onRejected := js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- settled{v: args[0], rejected: true}
		return nil
	})
	defer onRejected.Release()
	p.Call("then", onFulfilled, onRejected)
	select {
	case s := <-ch:
		if !s.rejected {
			return s.v, nil
		}
		if !s.v.InstanceOf(js.Global().Get("Error")) {
			t.Fatalf("rejected with %s, want an Error", s.v.Type())
		}
		return js.Undefined(), &rejection{s.v.Get("message").String()}
	case <-time.After(30 * time.Second):
		t.Fatal("promise did not settle within 30s")
		return js.Undefined(), nil
	}
}

// call invokes paywallet[name](args...) and awaits its Promise.
func call(t *testing.T, name string, args ...any) (js.Value, error) {
	t.Helper()
	return await(t, js.Global().Get("paywallet").Call(name, args...))
}

// mustCall is call for calls that must succeed.
func mustCall(t *testing.T, name string, args ...any) js.Value {
	t.Helper()
	v, err := call(t, name, args...)
	if err != nil {
		t.Fatalf("%s: rejected: %v", name, err)
	}
	return v
}

// wantReject checks that paywallet[name](args...) rejects with exactly want.
func wantReject(t *testing.T, want string, name string, args ...any) {
	t.Helper()
	v, err := call(t, name, args...)
	if err == nil {
		t.Fatalf("%s: fulfilled with %s, want rejection %q", name, js.Global().Get("String").Invoke(v).String(), want)
	}
	if err.Error() != want {
		t.Fatalf("%s: rejected with %q, want %q", name, err.Error(), want)
	}
}

// ownKeys returns the sorted own property names of a JavaScript object.
func ownKeys(t *testing.T, v js.Value) []string {
	t.Helper()
	if v.Type() != js.TypeObject {
		t.Fatalf("got %s, want an object", v.Type())
	}
	names := js.Global().Get("Object").Call("getOwnPropertyNames", v)
	keys := make([]string, names.Length())
	for i := range keys {
		keys[i] = names.Index(i).String()
	}
	if syms := js.Global().Get("Object").Call("getOwnPropertySymbols", v).Length(); syms != 0 {
		t.Fatalf("object has %d symbol properties, want none", syms)
	}
	sort.Strings(keys)
	return keys
}

// stringField returns v[name], failing unless it is a string.
func stringField(t *testing.T, v js.Value, name string) string {
	t.Helper()
	f := v.Get(name)
	if f.Type() != js.TypeString {
		t.Fatalf("%s is %s, want string", name, f.Type())
	}
	return f.String()
}

// keyInfo is a decoded {handle, publicKey, publicKeyUncompressed} result.
type keyInfo struct {
	handle string
	public *walletcrypto.PublicKey
}

// checkKeyResult checks a generateKey/decryptSessionKey result: exactly
// the three fields, a well-formed handle, and two encodings of one point.
func checkKeyResult(t *testing.T, v js.Value) keyInfo {
	t.Helper()
	if got, want := ownKeys(t, v), []string{"handle", "publicKey", "publicKeyUncompressed"}; !slices.Equal(got, want) {
		t.Fatalf("result keys = %q, want %q", got, want)
	}
	h := stringField(t, v, "handle")
	if !validHandle(h) {
		t.Fatalf("handle %q is not 32 lower-case hex characters", h)
	}
	comp := stringField(t, v, "publicKey")
	uncomp := stringField(t, v, "publicKeyUncompressed")
	if len(comp) != 66 || len(uncomp) != 130 {
		t.Fatalf("public key lengths %d/%d, want 66/130", len(comp), len(uncomp))
	}
	pc, err := walletcrypto.ParsePublicKeyHex(comp)
	if err != nil {
		t.Fatalf("publicKey %q: %v", comp, err)
	}
	pu, err := walletcrypto.ParsePublicKeyHex(uncomp)
	if err != nil {
		t.Fatalf("publicKeyUncompressed %q: %v", uncomp, err)
	}
	if !pc.Equal(pu) {
		t.Fatal("publicKey and publicKeyUncompressed are different points")
	}
	if comp != pc.CompressedHex() || uncomp != pu.UncompressedHex() {
		t.Fatal("public keys are not in canonical lower-case hex")
	}
	return keyInfo{handle: h, public: pc}
}

// newKey calls generateKey and checks its result.
func newKey(t *testing.T) keyInfo {
	t.Helper()
	return checkKeyResult(t, mustCall(t, "generateKey"))
}

// storedKey returns the private key behind handle, straight from the store.
func storedKey(t *testing.T, handle string) *walletcrypto.PrivateKey {
	t.Helper()
	var key *walletcrypto.PrivateKey
	if err := testKeys.use(handle, func(k *walletcrypto.PrivateKey) error {
		key = k
		return nil
	}); err != nil {
		t.Fatalf("store: %v", err)
	}
	return key
}

// targetBundle returns a target bundle for a new target key, signed by a new
// signer, with the signer and the target's private key.
func targetBundle(t *testing.T) (bundle string, signer, target *walletcrypto.PrivateKey) {
	t.Helper()
	var err error
	if signer, err = walletcrypto.GenerateKey(); err != nil {
		t.Fatal(err)
	}
	if target, err = walletcrypto.GenerateKey(); err != nil {
		t.Fatal(err)
	}
	if bundle, err = walletcrypto.NewTargetBundle(signer, target.PublicKey()); err != nil {
		t.Fatal(err)
	}
	return bundle, signer, target
}

func TestReadyAndShape(t *testing.T) {
	if readyCalls != 1 {
		t.Errorf("paywalletReady called %d times, want 1", readyCalls)
	}
	pw := js.Global().Get("paywallet")
	if !js.Global().Get("Object").Call("isFrozen", pw).Bool() {
		t.Error("paywallet is not frozen")
	}
	want := []string{"accountTypes", "decryptSessionKey", "forget", "generateKey", "hpkeSeal", "openExportBundle", "requiredBeneficiaryFields",
		"revealSecret", "sealOtp", "setExpiry", "stamp", "validateAccountInfo", "verifyTargetBundle", "version"}
	if got := ownKeys(t, pw); !slices.Equal(got, want) {
		t.Errorf("paywallet keys = %q, want %q", got, want)
	}
	for _, name := range want[:len(want)-1] {
		if typ := pw.Get(name).Type(); typ != js.TypeFunction {
			t.Errorf("paywallet.%s is %s, want function", name, typ)
		}
	}
	if v := pw.Get("version"); v.Type() != js.TypeString || v.String() != version {
		t.Errorf("paywallet.version = %v, want %q", v, version)
	}
}

func TestGenerateKey(t *testing.T) {
	a := newKey(t)
	b := newKey(t)
	if a.handle == b.handle {
		t.Fatal("two keys got the same handle")
	}
	if a.public.Equal(b.public) {
		t.Fatal("two keys got the same public key")
	}
	for _, k := range []keyInfo{a, b} {
		if !storedKey(t, k.handle).PublicKey().Equal(k.public) {
			t.Fatal("returned public key does not belong to the stored private key")
		}
		mustCall(t, "forget", k.handle)
	}
}

func TestHandlesAreRandom(t *testing.T) {
	seen := make(map[string]bool)
	for range 16 {
		k := newKey(t)
		if seen[k.handle] {
			t.Fatalf("handle %s issued twice", k.handle)
		}
		seen[k.handle] = true
	}
	// Sequential or counter-like handles would share long prefixes.
	var prev string
	sorted := slices.Sorted(maps.Keys(seen))
	for _, h := range sorted {
		if prev != "" && h[:12] == prev[:12] {
			t.Errorf("handles %s and %s share a 12-character prefix", prev, h)
		}
		prev = h
	}
	for h := range seen {
		if !mustCall(t, "forget", h).Bool() {
			t.Fatalf("forget(%s) = false", h)
		}
	}
}

func TestStamp(t *testing.T) {
	k := newKey(t)
	defer mustCall(t, "forget", k.handle)
	for _, payload := range []string{
		`{"type":"ACTIVITY_TYPE_CREATE_QUOTE","amount":1000}`,
		"x",
		"héllo ✓ 𝄞 \x00 \n",
	} {
		header := mustCall(t, "stamp", k.handle, payload)
		if header.Type() != js.TypeString {
			t.Fatalf("stamp returned %s, want string", header.Type())
		}
		st, err := walletcrypto.ParseStamp(header.String())
		if err != nil {
			t.Fatalf("ParseStamp(%q): %v", header.String(), err)
		}
		if !st.PublicKey.Equal(k.public) {
			t.Fatal("stamp carries a different public key")
		}
		if st.Scheme != walletcrypto.StampScheme {
			t.Fatalf("scheme %q", st.Scheme)
		}
		if err := st.Verify([]byte(payload)); err != nil {
			t.Fatalf("stamp over %q does not verify: %v", payload, err)
		}
		if err := st.Verify([]byte(payload + " ")); err == nil {
			t.Fatal("stamp verifies over a different payload")
		}
	}
}

func TestVerifyTargetBundle(t *testing.T) {
	bundle, signer, target := targetBundle(t)
	for _, pinned := range []string{
		signer.PublicKey().UncompressedHex(),
		signer.PublicKey().CompressedHex(),
		strings.ToUpper(signer.PublicKey().UncompressedHex()),
	} {
		v := mustCall(t, "verifyTargetBundle", bundle, pinned)
		if got := ownKeys(t, v); !slices.Equal(got, []string{"targetPublic"}) {
			t.Fatalf("result keys = %q, want [targetPublic]", got)
		}
		if got, want := stringField(t, v, "targetPublic"), target.PublicKey().UncompressedHex(); got != want {
			t.Fatalf("targetPublic = %s, want %s", got, want)
		}
	}

	other, err := walletcrypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	wantReject(t, "verifyTargetBundle: target bundle is not signed by the pinned signer",
		"verifyTargetBundle", bundle, other.PublicKey().UncompressedHex())

	// A bundle that names the pinned signer but was signed by someone else.
	forged := forgeSigner(t, bundle, other.PublicKey())
	wantReject(t, "verifyTargetBundle: target bundle signature does not verify",
		"verifyTargetBundle", forged, other.PublicKey().UncompressedHex())

	_, err = call(t, "verifyTargetBundle", "{}", signer.PublicKey().UncompressedHex())
	if err == nil || !strings.HasPrefix(err.Error(), "verifyTargetBundle: invalid target bundle: ") {
		t.Fatalf("garbage bundle: got %v", err)
	}
}

// forgeSigner returns bundle with its enclaveQuorumPublic replaced by
// claimed, keeping the original data and signature.
func forgeSigner(t *testing.T, bundle string, claimed *walletcrypto.PublicKey) string {
	t.Helper()
	tb, err := walletcrypto.ParseTargetBundle(bundle)
	if err != nil {
		t.Fatal(err)
	}
	tb.EnclaveQuorumPublic = claimed
	return tb.Encode()
}

func TestSealOtp(t *testing.T) {
	k := newKey(t)
	defer mustCall(t, "forget", k.handle)
	bundle, signer, target := targetBundle(t)

	sealed := mustCall(t, "sealOtp", k.handle, "123456", bundle, signer.PublicKey().UncompressedHex())
	if sealed.Type() != js.TypeString {
		t.Fatalf("sealOtp returned %s, want string", sealed.Type())
	}
	if _, err := walletcrypto.ParseBundle(sealed.String()); err != nil {
		t.Fatalf("not the JSON HPKE form: %v", err)
	}
	pt, err := walletcrypto.OpenBundle(target, sealed.String())
	if err != nil {
		t.Fatalf("target key cannot open the OTP bundle: %v", err)
	}
	code, pub, err := walletcrypto.ParseOTPPlaintext(pt)
	if err != nil {
		t.Fatalf("ParseOTPPlaintext(%q): %v", pt, err)
	}
	if code != "123456" {
		t.Fatalf("otp_code = %q", code)
	}
	if !pub.Equal(k.public) {
		t.Fatal("public_key is not the handle's key")
	}
	if !bytes.Contains(pt, []byte(`"public_key":"`+k.public.UncompressedHex()+`"`)) {
		t.Fatalf("plaintext %q does not carry the uncompressed key", pt)
	}
	if want := walletcrypto.OTPPlaintext("123456", k.public.UncompressedHex()); !bytes.Equal(pt, want) {
		t.Fatalf("plaintext %q, want %q", pt, want)
	}

	// The signer check comes before sealing.
	other, err := walletcrypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	otherBundle, err := walletcrypto.NewTargetBundle(other, target.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	wantReject(t, "sealOtp: target bundle is not signed by the pinned signer",
		"sealOtp", k.handle, "123456", otherBundle, signer.PublicKey().UncompressedHex())
	wantReject(t, "sealOtp: target bundle signature does not verify",
		"sealOtp", k.handle, "123456", forgeSigner(t, otherBundle, signer.PublicKey()), signer.PublicKey().UncompressedHex())
}

func TestDecryptSessionKey(t *testing.T) {
	client := newKey(t)
	defer mustCall(t, "forget", client.handle)
	session, err := walletcrypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := walletcrypto.SealSessionKey(client.public, session)
	if err != nil {
		t.Fatal(err)
	}
	got := checkKeyResult(t, mustCall(t, "decryptSessionKey", client.handle, bundle))
	defer mustCall(t, "forget", got.handle)
	if got.handle == client.handle {
		t.Fatal("session key reuses the client key's handle")
	}
	if !got.public.Equal(session.PublicKey()) {
		t.Fatal("decrypted key has the wrong public key")
	}
	payload := `{"requestId":"Request:0b7c5f0e-2d5b-4a53-9c0e-3f0a7c0f9d11"}`
	st, err := walletcrypto.ParseStamp(mustCall(t, "stamp", got.handle, payload).String())
	if err != nil {
		t.Fatal(err)
	}
	if !st.PublicKey.Equal(session.PublicKey()) {
		t.Fatal("session stamp carries the wrong public key")
	}
	if err := st.Verify([]byte(payload)); err != nil {
		t.Fatalf("session stamp does not verify with the session public key: %v", err)
	}

	// A bundle sealed to another key does not open with this one.
	stranger, err := walletcrypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := walletcrypto.SealSessionKey(stranger.PublicKey(), session)
	if err != nil {
		t.Fatal(err)
	}
	wantReject(t, "decryptSessionKey: bundle does not open with this key", "decryptSessionKey", client.handle, foreign)

	_, err = call(t, "decryptSessionKey", client.handle, "0OIl")
	if err == nil || !strings.HasPrefix(err.Error(), "decryptSessionKey: invalid session key bundle: ") {
		t.Fatalf("non-base58 bundle: got %v", err)
	}
}

func TestHpkeSeal(t *testing.T) {
	recipient, err := walletcrypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ key, plaintext string }{
		{recipient.PublicKey().UncompressedHex(), `{"otp_code":"123456"}`},
		{recipient.PublicKey().CompressedHex(), "héllo ✓ 𝄞"},
		{strings.ToUpper(recipient.PublicKey().UncompressedHex()), ""},
	} {
		v := mustCall(t, "hpkeSeal", tt.key, tt.plaintext)
		if got := ownKeys(t, v); !slices.Equal(got, []string{"ciphertext", "encappedPublic"}) {
			t.Fatalf("result keys = %q, want [ciphertext encappedPublic]", got)
		}
		encHex, ctHex := stringField(t, v, "encappedPublic"), stringField(t, v, "ciphertext")
		if !walletcrypto.IsUncompressedHex(encHex) || encHex != strings.ToLower(encHex) || ctHex != strings.ToLower(ctHex) {
			t.Fatalf("encappedPublic %q / ciphertext %q: want lower-case hex, the key uncompressed", encHex, ctHex)
		}
		enc, err := hex.DecodeString(encHex)
		if err != nil {
			t.Fatal(err)
		}
		ct, err := hex.DecodeString(ctHex)
		if err != nil {
			t.Fatal(err)
		}
		if len(ct) != len(tt.plaintext)+16 {
			t.Fatalf("ciphertext is %d bytes for %d bytes of plaintext, want the plaintext and a 16-byte tag", len(ct), len(tt.plaintext))
		}
		pt, err := walletcrypto.Open(recipient, enc, ct)
		if err != nil {
			t.Fatalf("recipient cannot open the sealed message: %v", err)
		}
		if string(pt) != tt.plaintext {
			t.Fatalf("opened %q, want %q", pt, tt.plaintext)
		}
	}

	// Every seal has its own ephemeral key.
	a := mustCall(t, "hpkeSeal", recipient.PublicKey().UncompressedHex(), "same")
	b := mustCall(t, "hpkeSeal", recipient.PublicKey().UncompressedHex(), "same")
	if stringField(t, a, "encappedPublic") == stringField(t, b, "encappedPublic") {
		t.Fatal("two seals share an encapsulated key")
	}

	// A key off the curve is refused before anything is sealed.
	bad := "04" + strings.Repeat("11", 64)
	wantReject(t, "hpkeSeal: recipientPublicKeyHex is not a P-256 public key in hex", "hpkeSeal", bad, "x")
}

func TestForget(t *testing.T) {
	k := newKey(t)
	mustCall(t, "stamp", k.handle, "before")
	if v := mustCall(t, "forget", k.handle); v.Type() != js.TypeBoolean || !v.Bool() {
		t.Fatalf("first forget = %v, want true", v)
	}
	if v := mustCall(t, "forget", k.handle); v.Type() != js.TypeBoolean || v.Bool() {
		t.Fatalf("second forget = %v, want false", v)
	}
	wantReject(t, "stamp: unknown key handle", "stamp", k.handle, "after")
	bundle, signer, _ := targetBundle(t)
	wantReject(t, "sealOtp: unknown key handle", "sealOtp", k.handle, "123456", bundle, signer.PublicKey().UncompressedHex())
	wantReject(t, "decryptSessionKey: unknown key handle", "decryptSessionKey", k.handle, "3yZe7d")
	if err := testKeys.use(k.handle, func(*walletcrypto.PrivateKey) error { return nil }); !errors.Is(err, errUnknownHandle) {
		t.Fatalf("store still holds the key: %v", err)
	}
}

func TestArgumentErrors(t *testing.T) {
	k := newKey(t)
	defer mustCall(t, "forget", k.handle)
	bundle, signer, _ := targetBundle(t)
	pinned := signer.PublicKey().UncompressedHex()
	unknown := strings.Repeat("0", 32)

	tests := []struct {
		method string
		args   []any
		want   string
	}{
		{"generateKey", []any{1}, "generateKey: expected 0 arguments, got 1"},

		{"verifyTargetBundle", nil, "verifyTargetBundle: expected 2 arguments (bundle, pinnedSignerHex), got 0"},
		{"verifyTargetBundle", []any{bundle}, "verifyTargetBundle: expected 2 arguments (bundle, pinnedSignerHex), got 1"},
		{"verifyTargetBundle", []any{js.Global().Get("Object").New(), pinned}, "verifyTargetBundle: bundle must be a string, got object"},
		{"verifyTargetBundle", []any{"", pinned}, "verifyTargetBundle: bundle must not be empty"},
		{"verifyTargetBundle", []any{bundle, 42}, "verifyTargetBundle: pinnedSignerHex must be a string, got number"},
		{"verifyTargetBundle", []any{bundle, "04zz"}, "verifyTargetBundle: pinnedSignerHex is not a P-256 public key in hex"},
		{"verifyTargetBundle", []any{bundle, pinned + "00"}, "verifyTargetBundle: pinnedSignerHex is longer than 130 bytes"},
		{"verifyTargetBundle", []any{strings.Repeat(" ", maxBundle+1), pinned}, "verifyTargetBundle: bundle is longer than 65536 bytes"},

		{"sealOtp", []any{k.handle, "123456", bundle}, "sealOtp: expected 4 arguments (handle, code, bundle, pinnedSignerHex), got 3"},
		{"sealOtp", []any{k.handle, 123456, bundle, pinned}, "sealOtp: code must be a string, got number"},
		{"sealOtp", []any{k.handle, "", bundle, pinned}, "sealOtp: code must be 1 to 64 printable ASCII characters without spaces"},
		{"sealOtp", []any{k.handle, "123 456", bundle, pinned}, "sealOtp: code must be 1 to 64 printable ASCII characters without spaces"},
		{"sealOtp", []any{k.handle, "12345é", bundle, pinned}, "sealOtp: code must be 1 to 64 printable ASCII characters without spaces"},
		{"sealOtp", []any{k.handle, strings.Repeat("1", 65), bundle, pinned}, "sealOtp: code must be 1 to 64 printable ASCII characters without spaces"},
		{"sealOtp", []any{true, "123456", bundle, pinned}, "sealOtp: handle must be a string, got boolean"},
		{"sealOtp", []any{k.handle, "123456", js.Null(), pinned}, "sealOtp: bundle must be a string, got null"},
		{"sealOtp", []any{k.handle, "123456", bundle, js.Undefined()}, "sealOtp: pinnedSignerHex must be a string, got undefined"},

		{"stamp", nil, "stamp: expected 2 arguments (handle, payload), got 0"},
		{"stamp", []any{k.handle}, "stamp: expected 2 arguments (handle, payload), got 1"},
		{"stamp", []any{k.handle, "a", "b"}, "stamp: expected 2 arguments (handle, payload), got 3"},
		{"stamp", []any{1, "payload"}, "stamp: handle must be a string, got number"},
		{"stamp", []any{k.handle, 5}, "stamp: payload must be a string, got number"},
		{"stamp", []any{k.handle, js.Global().Get("Uint8Array").New(3)}, "stamp: payload must be a string, got object"},
		{"stamp", []any{k.handle, ""}, "stamp: payload must not be empty"},
		{"stamp", []any{k.handle, strings.Repeat("a", maxPayload+1)}, "stamp: payload is longer than 1048576 bytes"},
		{"stamp", []any{"", "payload"}, "stamp: malformed key handle"},
		{"stamp", []any{strings.ToUpper(k.handle), "payload"}, "stamp: malformed key handle"},
		{"stamp", []any{k.handle + "0", "payload"}, "stamp: malformed key handle"},
		{"stamp", []any{unknown, "payload"}, "stamp: unknown key handle"},

		{"decryptSessionKey", []any{k.handle}, "decryptSessionKey: expected 2 arguments (handle, bundle), got 1"},
		{"decryptSessionKey", []any{k.handle, js.Undefined()}, "decryptSessionKey: bundle must be a string, got undefined"},
		{"decryptSessionKey", []any{k.handle, ""}, "decryptSessionKey: bundle must not be empty"},
		{"decryptSessionKey", []any{"zz", "3yZe7d"}, "decryptSessionKey: malformed key handle"},

		{"hpkeSeal", []any{pinned}, "hpkeSeal: expected 2 arguments (recipientPublicKeyHex, plaintext), got 1"},
		{"hpkeSeal", []any{42, "x"}, "hpkeSeal: recipientPublicKeyHex must be a string, got number"},
		{"hpkeSeal", []any{"", "x"}, "hpkeSeal: recipientPublicKeyHex must not be empty"},
		{"hpkeSeal", []any{"04zz", "x"}, "hpkeSeal: recipientPublicKeyHex is not a P-256 public key in hex"},
		{"hpkeSeal", []any{pinned + "00", "x"}, "hpkeSeal: recipientPublicKeyHex is longer than 130 bytes"},
		{"hpkeSeal", []any{pinned, js.Null()}, "hpkeSeal: plaintext must be a string, got null"},
		{"hpkeSeal", []any{pinned, strings.Repeat("a", maxBundle+1)}, "hpkeSeal: plaintext is longer than 65536 bytes"},

		{"forget", nil, "forget: expected 1 argument (handle), got 0"},
		{"forget", []any{k.handle, k.handle}, "forget: expected 1 argument (handle), got 2"},
		{"forget", []any{js.Null()}, "forget: handle must be a string, got null"},
		{"forget", []any{js.Global().Get("Object")}, "forget: handle must be a string, got function"},
		{"forget", []any{"not-a-handle"}, "forget: malformed key handle"},

		{"setExpiry", []any{k.handle}, "setExpiry: expected 2 arguments (handle, expiresAtMs), got 1"},
		{"setExpiry", []any{1, 1}, "setExpiry: handle must be a string, got number"},
		{"setExpiry", []any{"x", 1}, "setExpiry: malformed key handle"},
		{"setExpiry", []any{unknown, 1e12}, "setExpiry: unknown handle"},

		{"openExportBundle", []any{k.handle, bundle}, "openExportBundle: expected 3 arguments (handle, bundle, pinnedSignerHex), got 2"},
		{"openExportBundle", []any{k.handle, "", pinned}, "openExportBundle: bundle must not be empty"},
		{"openExportBundle", []any{k.handle, 7, pinned}, "openExportBundle: bundle must be a string, got number"},
		{"openExportBundle", []any{k.handle, strings.Repeat(" ", maxBundle+1), pinned}, "openExportBundle: bundle is longer than 65536 bytes"},
		{"openExportBundle", []any{k.handle, bundle, "04"}, "openExportBundle: pinnedSignerHex is not a P-256 public key in hex"},
		{"openExportBundle", []any{"", bundle, pinned}, "openExportBundle: malformed key handle"},
		{"openExportBundle", []any{unknown, bundle, pinned}, "openExportBundle: unknown key handle"},

		{"revealSecret", nil, "revealSecret: expected 1 argument (secretHandle), got 0"},
		{"revealSecret", []any{js.Null()}, "revealSecret: handle must be a string, got null"},
		{"revealSecret", []any{"zz"}, "revealSecret: malformed key handle"},
		{"revealSecret", []any{unknown}, "revealSecret: unknown secret handle"},
	}
	for _, tt := range tests {
		wantReject(t, tt.want, tt.method, tt.args...)
	}
	// None of the rejected calls touched the key.
	mustCall(t, "stamp", k.handle, "still usable")
}

func TestPanicBecomesRejection(t *testing.T) {
	var nilMap map[string]int
	tests := []struct {
		name string
		m    method
		want string
	}{
		{"boom", func([]js.Value) (any, error) { panic("kaboom") }, "boom: internal error: kaboom"},
		{"nilmap", func([]js.Value) (any, error) { nilMap["x"] = 1; return nil, nil },
			"nilmap: internal error: assignment to entry in nil map"},
		{"other", func([]js.Value) (any, error) { panic(42) }, "other: internal error: unexpected panic"},
		// js.ValueOf cannot convert a struct and panics while resolving.
		{"unconvertible", func([]js.Value) (any, error) { return struct{}{}, nil },
			"unconvertible: internal error: ValueOf: invalid value"},
		{"failing", func([]js.Value) (any, error) { return nil, errors.New("no luck") }, "failing: no luck"},
	}
	for _, tt := range tests {
		f := promiseFunc(tt.name, tt.m)
		_, err := await(t, f.Invoke())
		f.Release()
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: got %v, want rejection %q", tt.name, err, tt.want)
		}
	}
	// The instance survived.
	k := newKey(t)
	mustCall(t, "stamp", k.handle, "after panics")
	mustCall(t, "forget", k.handle)
}

func TestResultsHoldNoPrivateMaterial(t *testing.T) {
	client := newKey(t)
	defer mustCall(t, "forget", client.handle)
	session, err := walletcrypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	sessionBundle, err := walletcrypto.SealSessionKey(client.public, session)
	if err != nil {
		t.Fatal(err)
	}
	bundle, signer, _ := targetBundle(t)
	pinned := signer.PublicKey().UncompressedHex()

	genResult := mustCall(t, "generateKey")
	gen := checkKeyResult(t, genResult)
	defer mustCall(t, "forget", gen.handle)
	sessResult := mustCall(t, "decryptSessionKey", client.handle, sessionBundle)
	sess := checkKeyResult(t, sessResult)
	defer mustCall(t, "forget", sess.handle)

	secrets := []string{
		hex.EncodeToString(storedKey(t, client.handle).Bytes()),
		hex.EncodeToString(storedKey(t, gen.handle).Bytes()),
		hex.EncodeToString(session.Bytes()),
	}
	if got := hex.EncodeToString(storedKey(t, sess.handle).Bytes()); got != secrets[2] {
		t.Fatal("stored session key differs from the sealed one")
	}

	results := map[string]js.Value{
		"generateKey":        genResult,
		"decryptSessionKey":  sessResult,
		"verifyTargetBundle": mustCall(t, "verifyTargetBundle", bundle, pinned),
		"sealOtp":            mustCall(t, "sealOtp", client.handle, "654321", bundle, pinned),
		"stamp":              mustCall(t, "stamp", sess.handle, "payload"),
	}
	allowed := map[string][]string{
		"generateKey":        {"handle", "publicKey", "publicKeyUncompressed"},
		"decryptSessionKey":  {"handle", "publicKey", "publicKeyUncompressed"},
		"verifyTargetBundle": {"targetPublic"},
	}
	for name, v := range results {
		var values []string
		if v.Type() == js.TypeString {
			values = []string{v.String()}
		} else {
			keys := ownKeys(t, v)
			if !slices.Equal(keys, allowed[name]) {
				t.Errorf("%s result keys = %q, want %q", name, keys, allowed[name])
			}
			for _, key := range keys {
				if strings.Contains(strings.ToLower(key), "priv") || strings.Contains(strings.ToLower(key), "secret") {
					t.Errorf("%s result has field %q", name, key)
				}
				values = append(values, stringField(t, v, key))
			}
			if proto := js.Global().Get("Object").Call("getPrototypeOf", v); !proto.Equal(js.Global().Get("Object").Get("prototype")) {
				t.Errorf("%s result is not a plain object", name)
			}
		}
		for _, s := range values {
			for _, secret := range secrets {
				if strings.Contains(strings.ToLower(s), secret) {
					t.Errorf("%s result contains a private key", name)
				}
			}
		}
	}
}

func TestBadCallsReturnRejectedPromises(t *testing.T) {
	// Argument errors reject; they never throw synchronously.
	pw := js.Global().Get("paywallet")
	for _, name := range []string{"generateKey", "verifyTargetBundle", "sealOtp", "stamp", "decryptSessionKey", "hpkeSeal", "forget",
		"validateAccountInfo", "accountTypes", "requiredBeneficiaryFields", "setExpiry", "openExportBundle", "revealSecret"} {
		p := pw.Call(name, js.Undefined(), 1, 2, 3, 4, 5)
		if !p.InstanceOf(js.Global().Get("Promise")) {
			t.Fatalf("%s did not return a Promise", name)
		}
		_, err := await(t, p)
		if err == nil || !strings.HasPrefix(err.Error(), name+": expected ") {
			t.Errorf("%s: got %v", name, err)
		}
	}
}
