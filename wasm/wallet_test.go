//go:build js && wasm

package main

// These tests run under Node (go_js_wasm_exec) and go through the real
// JavaScript surface: they call globalThis.paywallet.<method>(...) and await
// the returned Promise. Awaiting works because the test goroutine is not a
// js.FuncOf callback: while it blocks on a channel the JavaScript event loop
// runs and settles the Promise.
//
//	PATH="$(go env GOROOT)/lib/wasm:$PATH" GOOS=js GOARCH=wasm go test ./wasm/
//
// The module's keys are WebCrypto CryptoKeys (Node's crypto.subtle). The
// other side of every protocol (signers of target and export bundles,
// recipients of seals, verifiers of stamps) is the standard library's
// crypto/ecdsa, crypto/ecdh and crypto/hpke: the test binary may link them,
// the module must not (deps_test.go).

import (
	"bytes"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hpke"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"math/big"
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
	installIDBShim() // Node has no IndexedDB (vault_test.go)
	// Under direct_exec.js the loader's glue installs the direct calls, as
	// the page's loader does; under go_js_wasm_exec the js.Func methods run.
	direct := js.Global().Get("paywalletTestDirect")
	ready := js.FuncOf(func(_ js.Value, a []js.Value) any {
		readyCalls++
		if direct.Type() == js.TypeFunction && len(a) == 1 {
			if !direct.Invoke(a[0]).Bool() {
				panic("the direct calls did not install")
			}
		}
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
	return callOn(t, js.Global().Get("paywallet"), name, args...)
}

// callOn invokes w[name](args...) on a wallet object made by newWallet and
// awaits its Promise.
func callOn(t *testing.T, w js.Value, name string, args ...any) (js.Value, error) {
	t.Helper()
	return await(t, w.Call(name, args...))
}

// mustCall is call for calls that must succeed.
func mustCall(t *testing.T, name string, args ...any) js.Value {
	t.Helper()
	return mustCallOn(t, js.Global().Get("paywallet"), name, args...)
}

func mustCallOn(t *testing.T, w js.Value, name string, args ...any) js.Value {
	t.Helper()
	v, err := callOn(t, w, name, args...)
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
		t.Fatalf("%s: fulfilled with %s, want rejection %q", name, jsString(v), want)
	}
	if err.Error() != want {
		t.Fatalf("%s: rejected with %q, want %q", name, err.Error(), want)
	}
}

func jsString(v js.Value) string { return js.Global().Get("String").Invoke(v).String() }

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

// jsStrings returns the elements of a JavaScript array of strings.
func jsStrings(v js.Value) []string {
	out := make([]string, v.Length())
	for i := range out {
		out[i] = v.Index(i).String()
	}
	return out
}

// keyResult is a decoded {handle, publicKey, publicKeyUncompressed,
// purpose} result.
type keyResult struct {
	handle  string
	public  *walletcrypto.PublicKey
	purpose string
}

// keyResultFields are the fields of a generateKey/decryptSessionKey result.
var keyResultFields = []string{"handle", "publicKey", "publicKeyUncompressed", "purpose"}

// checkKeyResult checks a generateKey/decryptSessionKey result: exactly
// the four fields, a well-formed handle, two encodings of one point, and
// the purpose wanted.
func checkKeyResult(t *testing.T, v js.Value, wantPurpose string) keyResult {
	t.Helper()
	if got := ownKeys(t, v); !slices.Equal(got, keyResultFields) {
		t.Fatalf("result keys = %q, want %q", got, keyResultFields)
	}
	return checkKeyFields(t, v, wantPurpose)
}

// checkKeyFields checks the key fields of a result that may have more.
func checkKeyFields(t *testing.T, v js.Value, wantPurpose string) keyResult {
	t.Helper()
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
	if p := stringField(t, v, "purpose"); p != wantPurpose {
		t.Fatalf("purpose = %q, want %q", p, wantPurpose)
	}
	return keyResult{handle: h, public: pc, purpose: wantPurpose}
}

// newKey calls generateKey(purpose) and checks its result.
func newKey(t *testing.T, purpose string) keyResult {
	t.Helper()
	return checkKeyResult(t, mustCall(t, "generateKey", purpose), purpose)
}

// storedKey returns the key behind handle, straight from the store.
func storedKey(t *testing.T, handle string, p purpose) *key {
	t.Helper()
	k, err := testKeys.get(handle, p)
	if err != nil {
		t.Fatalf("store: %v", err)
	}
	return k
}

// entryOf returns the store's entry under handle (nil if none), without
// the expiry check every method makes.
func entryOf(ks *keyStore, handle string) *entry {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.entries[handle]
}

// subtleOrFatal returns crypto.subtle.
func subtleOrFatal(t *testing.T) js.Value {
	t.Helper()
	s, err := subtle()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// --- The standard library's side of the protocols. ---

var (
	curveN = elliptic.P256().Params().N
	halfN  = new(big.Int).Rsh(curveN, 1)
)

// stdECDH is a walletcrypto.ECDHKey over a crypto/ecdh key.
type stdECDH struct{ k *ecdh.PrivateKey }

func newStdECDH(t testing.TB) stdECDH {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return stdECDH{k}
}

func (e stdECDH) PublicKey() *walletcrypto.PublicKey {
	p, err := walletcrypto.ParsePublicKey(e.k.PublicKey().Bytes())
	if err != nil {
		panic(err)
	}
	return p
}

func (e stdECDH) ECDH(peer *walletcrypto.PublicKey) ([]byte, error) {
	pk, err := ecdh.P256().NewPublicKey(peer.Uncompressed())
	if err != nil {
		return nil, err
	}
	return e.k.ECDH(pk)
}

// stdBackend is a walletcrypto.Backend of crypto/ecdh and crypto/ecdsa; eph,
// when set, is the ephemeral key of every seal.
type stdBackend struct{ eph walletcrypto.ECDHKey }

func (b stdBackend) GenerateECDH() (walletcrypto.ECDHKey, error) {
	if b.eph != nil {
		return b.eph, nil
	}
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	return stdECDH{k}, err
}

func (stdBackend) VerifyECDSA(pub *walletcrypto.PublicKey, message, der []byte) bool {
	return stdVerify(pub, message, der)
}

// stdVerify checks a DER ECDSA signature over SHA-256(message) with
// crypto/ecdsa, which accepts high S.
func stdVerify(pub *walletcrypto.PublicKey, message, der []byte) bool {
	k, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pub.Uncompressed())
	if err != nil {
		return false
	}
	d := sha256.Sum256(message)
	return ecdsa.VerifyASN1(k, d[:], der)
}

// stdSigner is an enclave quorum key: it signs target and export bundles.
type stdSigner struct {
	k   *ecdsa.PrivateKey
	pub *walletcrypto.PublicKey
}

func newSigner(t testing.TB) *stdSigner {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := k.PublicKey.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := walletcrypto.ParsePublicKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	return &stdSigner{k: k, pub: pub}
}

// sign returns a DER signature over SHA-256(msg).
func (s *stdSigner) sign(t testing.TB, msg []byte) []byte {
	t.Helper()
	d := sha256.Sum256(msg)
	sig, err := ecdsa.SignASN1(rand.Reader, s.k, d[:])
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// envelope signs data into the enclave's signed envelope (the form of
// target and export bundles), claiming claimed as the signer (s.pub if nil).
func (s *stdSigner) envelope(t testing.TB, data []byte, claimed *walletcrypto.PublicKey) string {
	t.Helper()
	if claimed == nil {
		claimed = s.pub
	}
	tb := &walletcrypto.TargetBundle{
		Version:             walletcrypto.TargetBundleVersion,
		Data:                data,
		DataSignature:       s.sign(t, data),
		EnclaveQuorumPublic: claimed,
	}
	return tb.Encode()
}

// targetData is the data of a target bundle for target.
func targetData(target *walletcrypto.PublicKey) []byte {
	return []byte(`{"targetPublic":"` + target.UncompressedHex() + `","organizationId":"Customer:x","userId":"User:y"}`)
}

// targetBundle returns a target bundle for a new target key, signed by a new
// signer, with the signer and the target's private key.
func targetBundle(t *testing.T) (bundle string, signer *stdSigner, target stdECDH) {
	t.Helper()
	signer = newSigner(t)
	target = newStdECDH(t)
	return signer.envelope(t, targetData(target.PublicKey()), nil), signer, target
}

// withSignature returns the envelope s with its dataSignature replaced by
// f(r, s) (re-encoded as DER).
func withSignature(t *testing.T, bundle string, f func(r, s *big.Int) (*big.Int, *big.Int)) string {
	t.Helper()
	tb := parseEnvelope(t, bundle)
	r, s, err := walletcrypto.ParseDERSignature(tb.DataSignature)
	if err != nil {
		t.Fatal(err)
	}
	r2, s2 := f(new(big.Int).Set(r), new(big.Int).Set(s))
	if tb.DataSignature, err = walletcrypto.EncodeDERSignature(r2, s2); err != nil {
		t.Fatal(err)
	}
	return tb.Encode()
}

// highS makes s the high one of s and n - s.
func highS(r, s *big.Int) (*big.Int, *big.Int) {
	if s.Cmp(halfN) <= 0 {
		s.Sub(curveN, s)
	}
	return r, s
}

// lowS makes s the low one of s and n - s.
func lowS(r, s *big.Int) (*big.Int, *big.Int) {
	if s.Cmp(halfN) > 0 {
		s.Sub(curveN, s)
	}
	return r, s
}

// bumpS changes the signature: s + 1.
func bumpS(r, s *big.Int) (*big.Int, *big.Int) {
	s.Add(s, big.NewInt(1))
	if s.Cmp(curveN) >= 0 {
		s.SetInt64(1)
	}
	return r, s
}

// forgeSigner returns bundle with its enclaveQuorumPublic replaced by
// claimed, keeping the original data and signature.
func forgeSigner(t *testing.T, bundle string, claimed *walletcrypto.PublicKey) string {
	t.Helper()
	tb := parseEnvelope(t, bundle)
	tb.EnclaveQuorumPublic = claimed
	return tb.Encode()
}

// parseEnvelope parses a signed envelope (a target or an export bundle)
// without checking it.
func parseEnvelope(t *testing.T, bundle string) *walletcrypto.TargetBundle {
	t.Helper()
	var env struct {
		Version             string `json:"version"`
		Data                string `json:"data"`
		DataSignature       string `json:"dataSignature"`
		EnclaveQuorumPublic string `json:"enclaveQuorumPublic"`
	}
	if err := json.Unmarshal([]byte(bundle), &env); err != nil {
		t.Fatal(err)
	}
	signer, err := walletcrypto.ParsePublicKeyHex(env.EnclaveQuorumPublic)
	if err != nil {
		t.Fatal(err)
	}
	return &walletcrypto.TargetBundle{
		Version:             env.Version,
		Data:                hexBytes(t, env.Data),
		DataSignature:       hexBytes(t, env.DataSignature),
		EnclaveQuorumPublic: signer,
	}
}

func hexBytes(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// verifyStamp parses a stamp header and checks it with crypto/ecdsa over
// payload; it returns the stamp.
func verifyStamp(t *testing.T, header js.Value, payload string, want *walletcrypto.PublicKey) *walletcrypto.Stamp {
	t.Helper()
	if header.Type() != js.TypeString {
		t.Fatalf("stamp returned %s, want string", header.Type())
	}
	st, err := walletcrypto.ParseStamp(header.String())
	if err != nil {
		t.Fatalf("ParseStamp(%q): %v", header.String(), err)
	}
	if !st.PublicKey.Equal(want) {
		t.Fatal("stamp carries a different public key")
	}
	// The header is the canonical form, with the key compressed.
	if st.Encode() != header.String() {
		t.Fatalf("stamp %q is not canonical (%q)", header.String(), st.Encode())
	}
	raw, err := base64.RawURLEncoding.DecodeString(header.String())
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]string
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatalf("stamp JSON %q: %v", raw, err)
	}
	if fields["publicKey"] != want.CompressedHex() {
		t.Fatalf("stamp publicKey %q, want the compressed key %s", fields["publicKey"], want.CompressedHex())
	}
	if st.Scheme != walletcrypto.StampScheme {
		t.Fatalf("scheme %q", st.Scheme)
	}
	if !stdVerify(st.PublicKey, []byte(payload), st.Signature) {
		t.Fatalf("stamp over %q does not verify with crypto/ecdsa", payload)
	}
	if stdVerify(st.PublicKey, []byte(payload+" "), st.Signature) {
		t.Fatal("stamp verifies over a different payload")
	}
	return st
}

// hpkeOpen opens enc/ct with the standard library's crypto/hpke in the
// bundle suite, AAD enc || pkR.
func hpkeOpen(t *testing.T, rcpt stdECDH, enc, ct []byte) ([]byte, error) {
	t.Helper()
	kem := hpke.DHKEM(ecdh.P256())
	sk, err := kem.NewPrivateKey(rcpt.k.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	r, err := hpke.NewRecipient(enc, sk, hpke.HKDFSHA256(), hpke.AES256GCM(), []byte(walletcrypto.HPKEInfo))
	if err != nil {
		return nil, err
	}
	aad := append(append([]byte{}, enc...), rcpt.k.PublicKey().Bytes()...)
	return r.Open(aad, ct)
}

// --- Tests. ---

func TestReadyAndShape(t *testing.T) {
	if readyCalls != 1 {
		t.Errorf("paywalletReady called %d times, want 1", readyCalls)
	}
	pw := js.Global().Get("paywallet")
	if !js.Global().Get("Object").Call("isFrozen", pw).Bool() {
		t.Error("paywallet is not frozen")
	}
	want := []string{"accountForm", "accountTypes", "decryptSessionKey", "deleteSession", "forget", "generateKey", "hpkeSeal", "openExportBundle",
		"requiredBeneficiaryFields", "resumeSession", "revealSecret", "sealOtp", "setExpiry", "stamp", "storeSession",
		"validateAccountInfo", "verifyTargetBundle", "version"}
	wantKeys := append(slices.Clone(want), "calls")
	slices.Sort(wantKeys)
	if got := ownKeys(t, pw); !slices.Equal(got, wantKeys) {
		t.Errorf("paywallet keys = %q, want %q and calls", got, want)
	}
	wantCalls := "js.Func"
	if js.Global().Get("paywalletTestDirect").Type() == js.TypeFunction {
		wantCalls = "direct"
	}
	if got := pw.Get("calls"); got.Type() != js.TypeString || got.String() != wantCalls {
		t.Errorf("paywallet.calls = %v, want %q", got, wantCalls)
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

// TestGenerateKey checks both purposes: the result, and the CryptoKey
// behind the handle (non-extractable, private, one usage, the curve), and
// that the public key returned is the private key's.
func TestGenerateKey(t *testing.T) {
	s := subtleOrFatal(t)
	for _, tt := range []struct {
		name    string
		args    []any
		purpose purpose
		alg     string
		usages  []string
	}{
		{"no argument", nil, purposeSigning, "ECDSA", []string{"sign"}},
		{"undefined", []any{js.Undefined()}, purposeSigning, "ECDSA", []string{"sign"}},
		{"signing", []any{"signing"}, purposeSigning, "ECDSA", []string{"sign"}},
		{"recipient", []any{"recipient"}, purposeRecipient, "ECDH", []string{"deriveBits"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := checkKeyResult(t, mustCall(t, "generateKey", tt.args...), tt.purpose.String())
			b := checkKeyResult(t, mustCall(t, "generateKey", tt.args...), tt.purpose.String())
			defer mustCall(t, "forget", a.handle)
			defer mustCall(t, "forget", b.handle)
			if a.handle == b.handle || a.public.Equal(b.public) {
				t.Fatal("two keys share a handle or a public key")
			}
			for _, r := range []keyResult{a, b} {
				k := storedKey(t, r.handle, tt.purpose)
				if k.purpose != tt.purpose || !k.public.Equal(r.public) {
					t.Fatal("stored key differs from the result")
				}
				ck := k.private
				if !ck.InstanceOf(js.Global().Get("CryptoKey")) {
					t.Fatalf("stored key is %s, want a CryptoKey", jsString(ck))
				}
				if got := ck.Get("type").String(); got != "private" {
					t.Fatalf("type %q, want private", got)
				}
				if ck.Get("extractable").Type() != js.TypeBoolean || ck.Get("extractable").Bool() {
					t.Fatal("the private key is extractable")
				}
				if got := jsStrings(ck.Get("usages")); !slices.Equal(got, tt.usages) {
					t.Fatalf("usages %q, want exactly %q", got, tt.usages)
				}
				if alg := ck.Get("algorithm"); alg.Get("name").String() != tt.alg || alg.Get("namedCurve").String() != "P-256" {
					t.Fatalf("algorithm %s/%s, want %s/P-256", alg.Get("name"), alg.Get("namedCurve"), tt.alg)
				}
				for _, format := range []string{"pkcs8", "jwk", "raw"} {
					if v, err := awaitPromise(s.Call("exportKey", format, ck)); err == nil {
						t.Fatalf("exportKey(%q) of the private key resolved with %s", format, jsString(v))
					}
				}
				// The key does its purpose, for this public key, and
				// nothing else.
				msg := []byte("which key is this")
				peer := newStdECDH(t)
				peerKey, err := awaitImport(s, peer.PublicKey())
				if err != nil {
					t.Fatal(err)
				}
				params := objectConstructor.New()
				params.Set("name", "ECDH")
				params.Set("public", peerKey)
				sig, signErr := awaitPromise(s.Call("sign", algSignP256, ck, toJS(msg)))
				bits, deriveErr := awaitPromise(s.Call("deriveBits", params, ck, 256))
				switch tt.purpose {
				case purposeSigning:
					if signErr != nil {
						t.Fatal(signErr)
					}
					der, err := walletcrypto.DERFromP1363(fromJS(sig))
					if err != nil || !stdVerify(r.public, msg, der) {
						t.Fatal("the key's signature does not verify with the public key returned")
					}
					if deriveErr == nil {
						t.Fatal("a signing key derived bits")
					}
				case purposeRecipient:
					if deriveErr != nil {
						t.Fatal(deriveErr)
					}
					want, err := peer.ECDH(r.public)
					if err != nil || !bytes.Equal(fromJS(bits), want) {
						t.Fatal("the key's Diffie-Hellman output does not match the public key returned")
					}
					if signErr == nil {
						t.Fatal("a recipient key signed")
					}
				}
			}
		})
	}

	const bad = `generateKey: purpose must be "signing" or "recipient"`
	for _, p := range []any{"", "Signing", "RECIPIENT", "sign", "ecdh", 1, true, js.Null(), js.Global().Get("Object").New()} {
		wantReject(t, bad, "generateKey", p)
	}
	wantReject(t, "generateKey: expected 1 argument (purpose), got 2", "generateKey", "signing", "recipient")
}

func TestHandlesAreRandom(t *testing.T) {
	seen := make(map[string]bool)
	for i := range 16 {
		k := newKey(t, []string{"signing", "recipient"}[i%2])
		if seen[k.handle] {
			t.Fatalf("handle %s issued twice", k.handle)
		}
		seen[k.handle] = true
	}
	// Sequential or counter-like handles would share long prefixes.
	var prev string
	for _, h := range slices.Sorted(maps.Keys(seen)) {
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

// TestPurposes: a key does only what it was made for, and a refusal leaves
// it usable for that.
func TestPurposes(t *testing.T) {
	signing := newKey(t, "signing")
	defer mustCall(t, "forget", signing.handle)
	recipient := newKey(t, "recipient")
	defer mustCall(t, "forget", recipient.handle)
	bundle, signer, _ := targetBundle(t)
	pinned := signer.pub.UncompressedHex()
	// Bundles sealed to the signing key's own public key: refused all the
	// same, before anything is opened.
	sessionBundle, err := walletcrypto.SealCredentialBundleWith(stdBackend{}, signing.public, make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	exportBundle := signedExportBundle(t, signer, signing.public, exportOrg, []byte(exportMnemonic))

	const cannotSign = "this is a recipient key; it cannot sign"
	const notRecipient = `this is a signing key; use a key made with generateKey("recipient")`
	for _, tt := range []struct {
		method string
		args   []any
		want   string
	}{
		{"stamp", []any{recipient.handle, "payload"}, "stamp: " + cannotSign},
		{"sealOtp", []any{recipient.handle, "123456", bundle, pinned}, "sealOtp: " + cannotSign},
		{"storeSession", []any{recipient.handle, sessionObject("Session:1", dateNow()+60_000)}, "storeSession: " + cannotSign},
		{"decryptSessionKey", []any{signing.handle, sessionBundle}, "decryptSessionKey: " + notRecipient},
		{"openExportBundle", []any{signing.handle, exportBundle, pinned}, "openExportBundle: " + notRecipient},
	} {
		wantReject(t, tt.want, tt.method, tt.args...)
	}
	verifyStamp(t, mustCall(t, "stamp", signing.handle, "still signs"), "still signs", signing.public)
	other := signedExportBundle(t, signer, recipient.public, exportOrg, []byte(exportMnemonic))
	v := mustCall(t, "openExportBundle", recipient.handle, other, pinned)
	mustCall(t, "forget", stringField(t, v, "secret"))
}

func TestStamp(t *testing.T) {
	k := newKey(t, "signing")
	defer mustCall(t, "forget", k.handle)
	for _, payload := range []string{
		`{"type":"ACTIVITY_TYPE_CREATE_QUOTE","amount":1000}`,
		"x",
		"héllo ✓ 𝄞 \x00 \n",
		strings.Repeat("é", maxPayload/2), // exactly the largest payload
	} {
		verifyStamp(t, mustCall(t, "stamp", k.handle, payload), payload, k.public)
	}
}

// TestManyStamps: WebCrypto does not normalise S, so about half of the
// signatures are high-S (and some have short r or s); every one must be
// strict DER and verify. The stamps are in flight together.
func TestManyStamps(t *testing.T) {
	k := newKey(t, "signing")
	defer mustCall(t, "forget", k.handle)
	const n = 192
	pw := js.Global().Get("paywallet")
	noop := js.Global().Get("Function").New()
	promises := make([]js.Value, n)
	payloads := make([]string, n)
	for i := range promises {
		payloads[i] = `{"nonce":` + strings.Repeat("7", i%23+1) + `,"i":"` + hex.EncodeToString([]byte{byte(i)}) + `"}`
		promises[i] = pw.Call("stamp", k.handle, payloads[i])
		promises[i].Call("catch", noop) // awaited one by one below
	}
	high, low := 0, 0
	for i, p := range promises {
		header, err := await(t, p)
		if err != nil {
			t.Fatalf("stamp %d: %v", i, err)
		}
		st := verifyStamp(t, header, payloads[i], k.public)
		_, s, err := walletcrypto.ParseDERSignature(st.Signature)
		if err != nil {
			t.Fatal(err)
		}
		if s.Cmp(halfN) > 0 {
			high++
		} else {
			low++
		}
	}
	if high == 0 || low == 0 {
		t.Fatalf("%d high-S and %d low-S stamps of %d: want both kinds", high, low, n)
	}
	t.Logf("%d high-S, %d low-S stamps, all verify", high, low)
}

func TestVerifyTargetBundle(t *testing.T) {
	bundle, signer, target := targetBundle(t)
	for _, pinned := range []string{
		signer.pub.UncompressedHex(),
		signer.pub.CompressedHex(),
		strings.ToUpper(signer.pub.UncompressedHex()),
	} {
		v := mustCall(t, "verifyTargetBundle", bundle, pinned)
		if got := ownKeys(t, v); !slices.Equal(got, []string{"targetPublic"}) {
			t.Fatalf("result keys = %q, want [targetPublic]", got)
		}
		if got, want := stringField(t, v, "targetPublic"), target.PublicKey().UncompressedHex(); got != want {
			t.Fatalf("targetPublic = %s, want %s", got, want)
		}
	}
	pinned := signer.pub.UncompressedHex()
	other := newSigner(t)
	for _, tt := range []struct {
		name   string
		bundle string
		pinned string
		want   string // "" to pass
	}{
		{"high S passes", withSignature(t, bundle, highS), pinned, ""},
		{"low S passes", withSignature(t, bundle, lowS), pinned, ""},
		{"wrong signer", bundle, other.pub.UncompressedHex(), "target bundle is not signed by the pinned signer"},
		{"signed by another, claiming the pinned signer", forgeSigner(t, other.envelope(t, targetData(target.PublicKey()), nil), signer.pub),
			pinned, "target bundle signature does not verify"},
		{"tampered signature", withSignature(t, bundle, bumpS), pinned, "target bundle signature does not verify"},
		{"tampered data", signer.envelopeTampered(t, targetData(target.PublicKey())), pinned, "target bundle signature does not verify"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want == "" {
				v := mustCall(t, "verifyTargetBundle", tt.bundle, tt.pinned)
				if got := stringField(t, v, "targetPublic"); got != target.PublicKey().UncompressedHex() {
					t.Fatalf("targetPublic = %s", got)
				}
				return
			}
			wantReject(t, "verifyTargetBundle: "+tt.want, "verifyTargetBundle", tt.bundle, tt.pinned)
		})
	}
	_, err := call(t, "verifyTargetBundle", "{}", pinned)
	if err == nil || !strings.HasPrefix(err.Error(), "verifyTargetBundle: invalid target bundle: ") {
		t.Fatalf("garbage bundle: got %v", err)
	}
}

// envelopeTampered signs data and then changes one byte of it (in a key
// the parser ignores), keeping the bundle well-formed.
func (s *stdSigner) envelopeTampered(t *testing.T, data []byte) string {
	t.Helper()
	tb := &walletcrypto.TargetBundle{
		Version:             walletcrypto.TargetBundleVersion,
		Data:                data,
		DataSignature:       s.sign(t, data),
		EnclaveQuorumPublic: s.pub,
	}
	tampered := bytes.Replace(data, []byte("User:y"), []byte("User:z"), 1)
	if bytes.Equal(tampered, data) {
		t.Fatal("nothing to tamper with")
	}
	tb.Data = tampered
	return tb.Encode()
}

func TestSealOtp(t *testing.T) {
	k := newKey(t, "signing")
	defer mustCall(t, "forget", k.handle)
	bundle, signer, target := targetBundle(t)
	pinned := signer.pub.UncompressedHex()

	check := func(t *testing.T, sealed js.Value, code string) {
		t.Helper()
		if sealed.Type() != js.TypeString {
			t.Fatalf("sealOtp returned %s, want string", sealed.Type())
		}
		b, err := walletcrypto.ParseBundle(sealed.String())
		if err != nil {
			t.Fatalf("not the JSON HPKE form: %v", err)
		}
		if want := (walletcrypto.Bundle{EncappedPublic: b.EncappedPublic, Ciphertext: b.Ciphertext}).Encode(); sealed.String() != want {
			t.Fatalf("bundle %s is not canonical (%s)", sealed.String(), want)
		}
		pt, err := walletcrypto.OpenBundle(target, sealed.String())
		if err != nil {
			t.Fatalf("walletcrypto.OpenBundle with the target key: %v", err)
		}
		std, err := hpkeOpen(t, target, b.EncappedPublic, b.Ciphertext)
		if err != nil || !bytes.Equal(std, pt) {
			t.Fatalf("crypto/hpke opened %q, %v; walletcrypto %q", std, err, pt)
		}
		gotCode, pub, err := walletcrypto.ParseOTPPlaintext(pt)
		if err != nil {
			t.Fatalf("ParseOTPPlaintext(%q): %v", pt, err)
		}
		if gotCode != code || !pub.Equal(k.public) {
			t.Fatalf("otp_code %q, public_key %s", gotCode, pub)
		}
		if want := walletcrypto.OTPPlaintext(code, k.public.UncompressedHex()); !bytes.Equal(pt, want) {
			t.Fatalf("plaintext %q, want %q (the key uncompressed)", pt, want)
		}
	}

	for _, code := range []string{"123456", "A1b2-C3", strings.Repeat("9", maxOTPCode), `"\`} {
		check(t, mustCall(t, "sealOtp", k.handle, code, bundle, pinned), code)
	}
	for _, p := range []string{signer.pub.CompressedHex(), strings.ToUpper(pinned)} {
		check(t, mustCall(t, "sealOtp", k.handle, "123456", bundle, p), "123456")
	}
	check(t, mustCall(t, "sealOtp", k.handle, "123456", withSignature(t, bundle, highS), pinned), "123456")
	check(t, mustCall(t, "sealOtp", k.handle, "123456", withSignature(t, bundle, lowS), pinned), "123456")
	a := mustCall(t, "sealOtp", k.handle, "123456", bundle, pinned).String()
	if b := mustCall(t, "sealOtp", k.handle, "123456", bundle, pinned).String(); a == b {
		t.Fatal("two seals are identical")
	}

	// Nothing is sealed unless the bundle is the pinned signer's.
	other := newSigner(t)
	otherBundle := other.envelope(t, targetData(target.PublicKey()), nil)
	for _, tt := range []struct {
		name, bundle, want string
	}{
		{"wrong signer", otherBundle, "sealOtp: target bundle is not signed by the pinned signer"},
		{"signed by another, claiming the pinned signer", forgeSigner(t, otherBundle, signer.pub), "sealOtp: target bundle signature does not verify"},
		{"tampered signature", withSignature(t, bundle, bumpS), "sealOtp: target bundle signature does not verify"},
		{"tampered data", signer.envelopeTampered(t, targetData(target.PublicKey())), "sealOtp: target bundle signature does not verify"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantReject(t, tt.want, "sealOtp", k.handle, "123456", tt.bundle, pinned)
		})
	}
	_, err := call(t, "sealOtp", k.handle, "123456", "{}", pinned)
	if err == nil || !strings.HasPrefix(err.Error(), "sealOtp: invalid target bundle: ") {
		t.Fatalf("garbage bundle: got %v", err)
	}
}

// sealScalar seals a session key's scalar to recipient as the service does.
func sealScalar(t *testing.T, recipient *walletcrypto.PublicKey, scalar []byte) string {
	t.Helper()
	b, err := walletcrypto.SealCredentialBundleWith(stdBackend{}, recipient, scalar)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// scalarPublic is the public key of a scalar, by crypto/ecdh.
func scalarPublic(t *testing.T, scalar []byte) *walletcrypto.PublicKey {
	t.Helper()
	k, err := ecdh.P256().NewPrivateKey(scalar)
	if err != nil {
		t.Fatal(err)
	}
	return stdECDH{k}.PublicKey()
}

func TestDecryptSessionKey(t *testing.T) {
	client := newKey(t, "recipient")
	defer mustCall(t, "forget", client.handle)

	// Random scalars until both parities of Y have been seen, and a few
	// edges: 1 (G, odd Y), n - 1 (-G, even Y), one with a leading zero byte.
	var scalars [][]byte
	one := make([]byte, 32)
	one[31] = 1
	nMinus1 := new(big.Int).Sub(curveN, big.NewInt(1)).FillBytes(make([]byte, 32))
	leadingZero := make([]byte, 32)
	copy(leadingZero[1:], bytes.Repeat([]byte{0xa5}, 31))
	scalars = append(scalars, one, nMinus1, leadingZero)
	parity := map[byte]int{}
	for i := 0; i < 12 || parity[2] == 0 || parity[3] == 0; i++ {
		if i > 200 {
			t.Fatal("200 random keys and not both parities")
		}
		k := newStdECDH(t)
		scalars = append(scalars, k.k.Bytes())
		parity[k.PublicKey().Compressed()[0]]++
	}
	seen := map[byte]bool{}
	for _, scalar := range scalars {
		want := scalarPublic(t, scalar)
		seen[want.Compressed()[0]] = true
		bundle := sealScalar(t, client.public, scalar)
		got := checkKeyResult(t, mustCall(t, "decryptSessionKey", client.handle, bundle), "signing")
		if got.handle == client.handle {
			t.Fatal("session key reuses the client key's handle")
		}
		if !got.public.Equal(want) {
			t.Fatalf("scalar %x: public key %s, want %s", scalar, got.public, want)
		}
		payload := `{"requestId":"Request:0b7c5f0e-2d5b-4a53-9c0e-3f0a7c0f9d11"}`
		verifyStamp(t, mustCall(t, "stamp", got.handle, payload), payload, want)
		k := storedKey(t, got.handle, purposeSigning)
		ck := k.private
		if ck.Get("extractable").Bool() || ck.Get("type").String() != "private" || ck.Get("algorithm").Get("name").String() != "ECDSA" ||
			!slices.Equal(jsStrings(ck.Get("usages")), []string{"sign"}) {
			t.Fatalf("session CryptoKey %s", jsString(js.Global().Get("JSON").Call("stringify", ck)))
		}
		if _, err := awaitPromise(subtleOrFatal(t).Call("exportKey", "pkcs8", ck)); err == nil {
			t.Fatal("the session key exports")
		}
		mustCall(t, "forget", got.handle)
	}
	if !seen[2] || !seen[3] {
		t.Fatalf("parities seen: %v", seen)
	}

	session := newStdECDH(t).k.Bytes()
	for _, tt := range []struct {
		name   string
		bundle string
		want   string // exact, or a prefix when it ends in ": "
	}{
		{"sealed to another key", sealScalar(t, newStdECDH(t).PublicKey(), session), "decryptSessionKey: bundle does not open with this key"},
		{"tampered", tamperBase58(t, sealScalar(t, client.public, session)), "decryptSessionKey: bundle does not open with this key"},
		{"not base58", "0OIl", "decryptSessionKey: invalid session key bundle: "},
		{"too short", walletcrypto.Base58CheckEncode(make([]byte, 33)), "decryptSessionKey: invalid session key bundle: "},
		{"31 bytes", sealScalar(t, client.public, session[:31]), "decryptSessionKey: a session key must be 32 bytes"},
		{"33 bytes", sealScalar(t, client.public, append(session, 1)), "decryptSessionKey: a session key must be 32 bytes"},
		{"zero", sealScalar(t, client.public, make([]byte, 32)), "decryptSessionKey: the session key is not a valid P-256 key: "},
		{"n", sealScalar(t, client.public, curveN.FillBytes(make([]byte, 32))), "decryptSessionKey: the session key is not a valid P-256 key: "},
		{"all ones", sealScalar(t, client.public, bytes.Repeat([]byte{0xff}, 32)), "decryptSessionKey: the session key is not a valid P-256 key: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := call(t, "decryptSessionKey", client.handle, tt.bundle)
			if err == nil {
				t.Fatal("fulfilled")
			}
			if strings.HasSuffix(tt.want, ": ") && !strings.HasPrefix(err.Error(), tt.want) || !strings.HasSuffix(tt.want, ": ") && err.Error() != tt.want {
				t.Fatalf("rejected with %q, want %q", err, tt.want)
			}
		})
	}
	// The client key survives all of that.
	got := checkKeyResult(t, mustCall(t, "decryptSessionKey", client.handle, sealScalar(t, client.public, session)), "signing")
	mustCall(t, "forget", got.handle)
}

// tamperBase58 flips a bit of the ciphertext of a credential bundle and
// re-encodes it with a valid checksum.
func tamperBase58(t *testing.T, bundle string) string {
	t.Helper()
	payload, err := walletcrypto.Base58CheckDecode(bundle)
	if err != nil {
		t.Fatal(err)
	}
	payload[len(payload)-1] ^= 1
	return walletcrypto.Base58CheckEncode(payload)
}

func TestHpkeSeal(t *testing.T) {
	recipient := newStdECDH(t)
	pub := recipient.PublicKey()
	for _, tt := range []struct{ key, plaintext string }{
		{pub.UncompressedHex(), `{"otp_code":"123456"}`},
		{pub.CompressedHex(), "héllo ✓ 𝄞"},
		{strings.ToUpper(pub.UncompressedHex()), ""},
		{pub.UncompressedHex(), strings.Repeat("z", 5000)},
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
		if err != nil || string(pt) != tt.plaintext {
			t.Fatalf("walletcrypto.Open: %q, %v; want %q", pt, err, tt.plaintext)
		}
		std, err := hpkeOpen(t, recipient, enc, ct)
		if err != nil || string(std) != tt.plaintext {
			t.Fatalf("crypto/hpke: %q, %v; want %q", std, err, tt.plaintext)
		}
		// Another recipient cannot open it.
		if _, err := hpkeOpen(t, newStdECDH(t), enc, ct); err == nil {
			t.Fatal("a stranger opened the seal")
		}
	}

	// Every seal has its own ephemeral key.
	a := mustCall(t, "hpkeSeal", pub.UncompressedHex(), "same")
	b := mustCall(t, "hpkeSeal", pub.UncompressedHex(), "same")
	if stringField(t, a, "encappedPublic") == stringField(t, b, "encappedPublic") {
		t.Fatal("two seals share an encapsulated key")
	}

	// A key off the curve is refused before anything is sealed.
	bad := "04" + strings.Repeat("11", 64)
	wantReject(t, "hpkeSeal: recipientPublicKeyHex is not a P-256 public key in hex", "hpkeSeal", bad, "x")
}

// TestConcurrentCalls interleaves the flows and the goroutine methods.
func TestConcurrentCalls(t *testing.T) {
	signing := newKey(t, "signing")
	defer mustCall(t, "forget", signing.handle)
	recipient := newKey(t, "recipient")
	defer mustCall(t, "forget", recipient.handle)
	bundle, signer, target := targetBundle(t)
	pinned := signer.pub.UncompressedHex()
	session := newStdECDH(t)
	sessionBundle := sealScalar(t, recipient.public, session.k.Bytes())

	pw := js.Global().Get("paywallet")
	// Mark each Promise handled at once: Node ends the process on a
	// rejection nobody handles, and they are awaited one by one.
	noop := js.Global().Get("Function").New()
	handled := func(p js.Value) js.Value { p.Call("catch", noop); return p }
	type pending struct {
		p     js.Value
		check func(v js.Value)
	}
	var all []pending
	for i := range 24 {
		payload := "payload " + strings.Repeat("x", i+1)
		all = append(all,
			pending{handled(pw.Call("stamp", signing.handle, payload)), func(v js.Value) { verifyStamp(t, v, payload, signing.public) }},
			pending{handled(pw.Call("sealOtp", signing.handle, "1234", bundle, pinned)), func(v js.Value) {
				if _, err := walletcrypto.OpenBundle(target, v.String()); err != nil {
					t.Fatal(err)
				}
			}},
			pending{handled(pw.Call("decryptSessionKey", recipient.handle, sessionBundle)), func(v js.Value) {
				got := checkKeyResult(t, v, "signing")
				if !got.public.Equal(session.PublicKey()) {
					t.Fatal("wrong session key")
				}
				mustCall(t, "forget", got.handle)
			}},
			pending{handled(pw.Call("verifyTargetBundle", bundle, pinned)), func(v js.Value) {
				if stringField(t, v, "targetPublic") != target.PublicKey().UncompressedHex() {
					t.Fatal("wrong target")
				}
			}},
			pending{handled(pw.Call("stamp", recipient.handle, payload)), nil}, // rejects
		)
	}
	for i, c := range all {
		v, err := await(t, c.p)
		if c.check == nil {
			if err == nil || err.Error() != "stamp: this is a recipient key; it cannot sign" {
				t.Fatalf("call %d: %v", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		c.check(v)
	}
	flows.mu.Lock()
	left := len(flows.steps)
	flows.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d flow steps left behind", left)
	}
}

func TestForget(t *testing.T) {
	for _, p := range []purpose{purposeSigning, purposeRecipient} {
		k := newKey(t, p.String())
		e := entryOf(testKeys, k.handle)
		if v := mustCall(t, "forget", k.handle); v.Type() != js.TypeBoolean || !v.Bool() {
			t.Fatalf("first forget = %v, want true", v)
		}
		if v := mustCall(t, "forget", k.handle); v.Type() != js.TypeBoolean || v.Bool() {
			t.Fatalf("second forget = %v, want false", v)
		}
		if e.key != nil {
			t.Fatal("forget left the CryptoKey referenced")
		}
		if _, err := testKeys.get(k.handle, p); !errors.Is(err, errUnknownHandle) {
			t.Fatalf("store still holds the key: %v", err)
		}
	}
	k := newKey(t, "signing")
	mustCall(t, "stamp", k.handle, "before")
	mustCall(t, "forget", k.handle)
	wantReject(t, "stamp: unknown key handle", "stamp", k.handle, "after")
	bundle, signer, _ := targetBundle(t)
	wantReject(t, "sealOtp: unknown key handle", "sealOtp", k.handle, "123456", bundle, signer.pub.UncompressedHex())
	wantReject(t, "decryptSessionKey: unknown key handle", "decryptSessionKey", k.handle, "3yZe7d")
	wantReject(t, "storeSession: unknown key handle", "storeSession", k.handle, sessionObject("Session:1", dateNow()+1000))
}

func TestArgumentErrors(t *testing.T) {
	k := newKey(t, "signing")
	defer mustCall(t, "forget", k.handle)
	r := newKey(t, "recipient")
	defer mustCall(t, "forget", r.handle)
	bundle, signer, _ := targetBundle(t)
	pinned := signer.pub.UncompressedHex()
	unknown := strings.Repeat("0", 32)
	session := sessionObject("Session:1", dateNow()+60_000)

	tests := []struct {
		method string
		args   []any
		want   string
	}{
		{"generateKey", []any{1, 2}, "generateKey: expected 1 argument (purpose), got 2"},
		{"generateKey", []any{1}, `generateKey: purpose must be "signing" or "recipient"`},

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
		{"sealOtp", []any{unknown, "123456", bundle, pinned}, "sealOtp: unknown key handle"},

		{"stamp", nil, "stamp: expected 2 arguments (handle, payload), got 0"},
		{"stamp", []any{k.handle}, "stamp: expected 2 arguments (handle, payload), got 1"},
		{"stamp", []any{k.handle, "a", "b"}, "stamp: expected 2 arguments (handle, payload), got 3"},
		{"stamp", []any{1, "payload"}, "stamp: handle must be a string, got number"},
		{"stamp", []any{k.handle, 5}, "stamp: payload must be a string, got number"},
		{"stamp", []any{k.handle, js.Global().Get("Uint8Array").New(3)}, "stamp: payload must be a string, got object"},
		{"stamp", []any{k.handle, ""}, "stamp: payload must not be empty"},
		{"stamp", []any{k.handle, strings.Repeat("a", maxPayload+1)}, "stamp: payload is longer than 1048576 bytes"},
		{"stamp", []any{k.handle, strings.Repeat("é", maxPayload/2) + "a"}, "stamp: payload is longer than 1048576 bytes"},
		{"stamp", []any{"", "payload"}, "stamp: malformed key handle"},
		{"stamp", []any{strings.ToUpper(k.handle), "payload"}, "stamp: malformed key handle"},
		{"stamp", []any{k.handle + "0", "payload"}, "stamp: malformed key handle"},
		{"stamp", []any{unknown, "payload"}, "stamp: unknown key handle"},

		{"decryptSessionKey", []any{r.handle}, "decryptSessionKey: expected 2 arguments (handle, bundle), got 1"},
		{"decryptSessionKey", []any{r.handle, js.Undefined()}, "decryptSessionKey: bundle must be a string, got undefined"},
		{"decryptSessionKey", []any{r.handle, ""}, "decryptSessionKey: bundle must not be empty"},
		{"decryptSessionKey", []any{"zz", "3yZe7d"}, "decryptSessionKey: malformed key handle"},
		{"decryptSessionKey", []any{unknown, "3yZe7d"}, "decryptSessionKey: unknown key handle"},

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

		{"openExportBundle", []any{r.handle, bundle}, "openExportBundle: expected 3 arguments (handle, bundle, pinnedSignerHex), got 2"},
		{"openExportBundle", []any{r.handle, "", pinned}, "openExportBundle: bundle must not be empty"},
		{"openExportBundle", []any{r.handle, 7, pinned}, "openExportBundle: bundle must be a string, got number"},
		{"openExportBundle", []any{r.handle, strings.Repeat(" ", maxBundle+1), pinned}, "openExportBundle: bundle is longer than 65536 bytes"},
		{"openExportBundle", []any{r.handle, bundle, "04"}, "openExportBundle: pinnedSignerHex is not a P-256 public key in hex"},
		{"openExportBundle", []any{"", bundle, pinned}, "openExportBundle: malformed key handle"},
		{"openExportBundle", []any{unknown, bundle, pinned}, "openExportBundle: unknown key handle"},

		{"revealSecret", nil, "revealSecret: expected 1 argument (secretHandle), got 0"},
		{"revealSecret", []any{js.Null()}, "revealSecret: handle must be a string, got null"},
		{"revealSecret", []any{"zz"}, "revealSecret: malformed key handle"},
		{"revealSecret", []any{unknown}, "revealSecret: unknown secret handle"},

		{"storeSession", []any{k.handle}, "storeSession: expected 2 arguments (handle, session), got 1"},
		{"storeSession", []any{7, session}, "storeSession: handle must be a string, got number"},
		{"storeSession", []any{"x", session}, "storeSession: malformed key handle"},
		{"storeSession", []any{unknown, session}, "storeSession: unknown key handle"},
		{"resumeSession", []any{1}, "resumeSession: expected 0 arguments, got 1"},
		{"deleteSession", []any{"a", "b"}, "deleteSession: expected 1 argument (sessionId), got 2"},
		{"deleteSession", []any{5}, "deleteSession: sessionId must be a string, got number"},
	}
	for _, tt := range tests {
		wantReject(t, tt.want, tt.method, tt.args...)
	}
	// None of the rejected calls touched the keys.
	mustCall(t, "stamp", k.handle, "still usable")
	sess := checkKeyResult(t, mustCall(t, "decryptSessionKey", r.handle, sealScalar(t, r.public, newStdECDH(t).k.Bytes())), "signing")
	mustCall(t, "forget", sess.handle)
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
	for _, wrap := range []struct {
		kind string
		fn   func(string, method) js.Func
	}{{"goroutine", promiseFunc}, {"flow", flowFunc}} {
		for _, tt := range tests {
			f := wrap.fn(tt.name, tt.m)
			_, err := await(t, f.Invoke())
			f.Release()
			if err == nil || err.Error() != tt.want {
				t.Errorf("%s %s: got %v, want rejection %q", wrap.kind, tt.name, err, tt.want)
			}
		}
	}
	// The instance survived.
	k := newKey(t, "signing")
	mustCall(t, "stamp", k.handle, "after panics")
	mustCall(t, "forget", k.handle)
}

// TestFlowRounds checks the round machinery of flow.go with JavaScript
// Promises: results in order, chained rounds, rejections with the round's
// prefix, and panics in a later step.
func TestFlowRounds(t *testing.T) {
	resolve := func(v any) js.Value { return promiseConstructor.Call("resolve", v) }
	reject := func(msg string) js.Value {
		return promiseConstructor.Call("reject", errorConstructor.New(msg))
	}
	tests := []struct {
		name string
		m    method
		want string // the resolved string, or "!" + the rejection
	}{
		{"value", func([]js.Value) (any, error) { return "plain", nil }, "plain"},
		{"two rounds", func([]js.Value) (any, error) {
			return &round{promises: []js.Value{resolve("a"), resolve("b"), resolve("c")}, next: func(r []js.Value) (any, error) {
				joined := r[0].String() + r[1].String() + r[2].String()
				return &round{promises: []js.Value{resolve(joined)}, next: func(r []js.Value) (any, error) {
					return r[0].String() + "!", nil
				}}, nil
			}}, nil
		}, "abc!"},
		{"rejected", func([]js.Value) (any, error) {
			return &round{promises: []js.Value{resolve(1), reject("nope")}, fail: "step failed: ",
				next: func([]js.Value) (any, error) { return "unreached", nil }}, nil
		}, "!rejected: step failed: nope"},
		{"error later", func([]js.Value) (any, error) {
			return &round{promises: []js.Value{resolve(1)}, next: func([]js.Value) (any, error) { return nil, errors.New("late") }}, nil
		}, "!error later: late"},
		{"panic later", func([]js.Value) (any, error) {
			return &round{promises: []js.Value{resolve(1)}, next: func([]js.Value) (any, error) { panic("later") }}, nil
		}, "!panic later: internal error: later"},
		{"unconvertible later", func([]js.Value) (any, error) {
			return &round{promises: []js.Value{resolve(1)}, next: func([]js.Value) (any, error) { return struct{}{}, nil }}, nil
		}, "!unconvertible later: internal error: ValueOf: invalid value"},
	}
	for _, tt := range tests {
		f := flowFunc(tt.name, tt.m)
		v, err := await(t, f.Invoke())
		f.Release()
		switch {
		case strings.HasPrefix(tt.want, "!"):
			if err == nil || err.Error() != tt.want[1:] {
				t.Errorf("%s: got %v, want rejection %q", tt.name, err, tt.want[1:])
			}
		case err != nil || v.Type() != js.TypeString || v.String() != tt.want:
			t.Errorf("%s: got %s, %v; want %q", tt.name, jsString(v), err, tt.want)
		}
	}
	flows.mu.Lock()
	left := len(flows.steps)
	flows.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d flow steps left behind", left)
	}
}

// TestResultsHoldNoPrivateMaterial: results carry handles, public keys and
// sealed or signed data only: no CryptoKey, no bytes, no field that names a
// private key, and not the one private scalar the module ever sees (a
// sealed session key).
func TestResultsHoldNoPrivateMaterial(t *testing.T) {
	resetVault(t)
	client := newKey(t, "recipient")
	defer mustCall(t, "forget", client.handle)
	sessionScalar := newStdECDH(t).k.Bytes()
	sessionBundle := sealScalar(t, client.public, sessionScalar)
	bundle, signer, _ := targetBundle(t)
	pinned := signer.pub.UncompressedHex()

	signResult := mustCall(t, "generateKey", "signing")
	signing := checkKeyResult(t, signResult, "signing")
	defer mustCall(t, "forget", signing.handle)
	recipResult := mustCall(t, "generateKey", "recipient")
	recip := checkKeyResult(t, recipResult, "recipient")
	defer mustCall(t, "forget", recip.handle)
	sessResult := mustCall(t, "decryptSessionKey", client.handle, sessionBundle)
	sess := checkKeyResult(t, sessResult, "signing")
	defer mustCall(t, "forget", sess.handle)
	mustCall(t, "storeSession", sess.handle, sessionObject("Session:results", dateNow()+60_000))
	resumed := mustCall(t, "resumeSession")
	defer mustCall(t, "forget", stringField(t, resumed, "handle"))
	defer mustCall(t, "deleteSession")

	results := map[string]js.Value{
		"generateKey(signing)":   signResult,
		"generateKey(recipient)": recipResult,
		"decryptSessionKey":      sessResult,
		"resumeSession":          resumed,
		"verifyTargetBundle":     mustCall(t, "verifyTargetBundle", bundle, pinned),
		"hpkeSeal":               mustCall(t, "hpkeSeal", pinned, "x"),
		"sealOtp":                mustCall(t, "sealOtp", signing.handle, "654321", bundle, pinned),
		"stamp":                  mustCall(t, "stamp", sess.handle, "payload"),
	}
	allowed := map[string][]string{
		"generateKey(signing)":   keyResultFields,
		"generateKey(recipient)": keyResultFields,
		"decryptSessionKey":      keyResultFields,
		"resumeSession":          {"expiresAtMs", "handle", "publicKey", "publicKeyUncompressed", "purpose", "sessionId"},
		"verifyTargetBundle":     {"targetPublic"},
		"hpkeSeal":               {"ciphertext", "encappedPublic"},
	}
	secret := hex.EncodeToString(sessionScalar)
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
				if strings.Contains(strings.ToLower(key), "priv") || strings.Contains(strings.ToLower(key), "secret") ||
					strings.Contains(strings.ToLower(key), "scalar") {
					t.Errorf("%s result has field %q", name, key)
				}
				switch f := v.Get(key); {
				case f.Type() == js.TypeString:
					values = append(values, f.String())
				case key == "expiresAtMs" && f.Type() == js.TypeNumber:
				default:
					t.Errorf("%s result field %s is %s: only strings may leave the module", name, key, jsString(f))
				}
			}
			if proto := js.Global().Get("Object").Call("getPrototypeOf", v); !proto.Equal(js.Global().Get("Object").Get("prototype")) {
				t.Errorf("%s result is not a plain object", name)
			}
		}
		for _, s := range values {
			if strings.Contains(strings.ToLower(s), secret) {
				t.Errorf("%s result contains the session scalar", name)
			}
		}
	}
	// The vault's record holds the key as a CryptoKey, not as bytes.
	if rec := vaultRecordValue(t); rec.Type() != js.TypeUndefined {
		for _, k := range ownKeys(t, rec) {
			if f := rec.Get(k); f.Type() == js.TypeString && strings.Contains(strings.ToLower(f.String()), secret) {
				t.Errorf("vault record field %s holds the session scalar", k)
			}
		}
	}
}

func TestBadCallsReturnRejectedPromises(t *testing.T) {
	// Argument errors reject; they never throw synchronously.
	pw := js.Global().Get("paywallet")
	for _, name := range []string{"generateKey", "verifyTargetBundle", "sealOtp", "stamp", "decryptSessionKey", "hpkeSeal", "forget",
		"validateAccountInfo", "accountTypes", "accountForm", "requiredBeneficiaryFields", "setExpiry", "openExportBundle", "revealSecret",
		"storeSession", "resumeSession", "deleteSession"} {
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
