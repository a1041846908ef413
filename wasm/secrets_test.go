//go:build js && wasm

package main

// Tests of the export flow (openExportBundle, revealSecret), of secret
// handles, and of key expiry (setExpiry).

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"syscall/js"
	"testing"
	"time"

	"paywallet/shared/walletcrypto"
)

const (
	exportMnemonic = "legal winner thank year wave sausage worth useful legal winner thank yellow"
	exportOrg      = "Customer:019542f5-b3e7-7d02-8000-000000000001"
)

// signedExportBundle seals plaintext to recipient (with the standard
// library's ephemeral key) and signs the export envelope with signer, as
// the enclave does:
//
//	{"version":"v1.0.0","data":hex({"encappedPublic","ciphertext","organizationId"}),"dataSignature":DER hex,"enclaveQuorumPublic":130 hex}
func signedExportBundle(t *testing.T, signer *stdSigner, recipient *walletcrypto.PublicKey, org string, plaintext []byte) string {
	t.Helper()
	enc, ct, err := walletcrypto.SealWith(stdBackend{}, recipient, plaintext)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(struct {
		EncappedPublic string `json:"encappedPublic"`
		Ciphertext     string `json:"ciphertext"`
		OrganizationID string `json:"organizationId"`
	}{hex.EncodeToString(enc), hex.EncodeToString(ct), org})
	if err != nil {
		t.Fatal(err)
	}
	return signer.envelope(t, data, nil)
}

// exportBundle returns an export bundle of plaintext sealed to the client,
// signed by a new signer, with the signer.
func exportBundle(t *testing.T, client *walletcrypto.PublicKey, plaintext string) (string, *stdSigner) {
	t.Helper()
	signer := newSigner(t)
	return signedExportBundle(t, signer, client, exportOrg, []byte(plaintext)), signer
}

// openSecret runs openExportBundle and checks the shape of its result; it
// returns the secret handle.
func openSecret(t *testing.T, handle, bundle, pinned string) string {
	t.Helper()
	v := mustCall(t, "openExportBundle", handle, bundle, pinned)
	if got, want := ownKeys(t, v), []string{"organizationId", "secret"}; !slices.Equal(got, want) {
		t.Fatalf("result keys = %q, want %q", got, want)
	}
	if org := stringField(t, v, "organizationId"); org != exportOrg {
		t.Fatalf("organizationId = %q", org)
	}
	secret := stringField(t, v, "secret")
	if !validHandle(secret) || secret == handle {
		t.Fatalf("secret handle %q", secret)
	}
	return secret
}

// storedSecret returns the bytes behind a secret handle, straight from the store.
func storedSecret(t *testing.T, handle string) []byte {
	t.Helper()
	var secret []byte
	if err := testKeys.useSecret(handle, func(b []byte) error {
		secret = b
		return nil
	}); err != nil {
		t.Fatalf("store: %v", err)
	}
	return secret
}

func dateNow() float64 { return js.Global().Get("Date").Call("now").Float() }

// stored reports whether the store still holds an entry under handle,
// without the expiry check that every method makes.
func stored(handle string) bool {
	testKeys.mu.Lock()
	defer testKeys.mu.Unlock()
	_, ok := testKeys.entries[handle]
	return ok
}

func TestOpenExportBundle(t *testing.T) {
	client := newKey(t, "recipient")
	defer mustCall(t, "forget", client.handle)
	bundle, signer := exportBundle(t, client.public, exportMnemonic)

	for _, pinned := range []string{
		signer.pub.UncompressedHex(),
		signer.pub.CompressedHex(),
		strings.ToUpper(signer.pub.UncompressedHex()),
	} {
		v := mustCall(t, "openExportBundle", client.handle, bundle, pinned)
		// Nothing of the mnemonic is in the result.
		for _, key := range ownKeys(t, v) {
			value := stringField(t, v, key)
			for _, word := range strings.Fields(exportMnemonic) {
				if strings.Contains(value, word) {
					t.Fatalf("result field %s = %q contains %q", key, value, word)
				}
			}
		}
		secret := openSecret(t, client.handle, bundle, pinned)
		if got := storedSecret(t, secret); string(got) != exportMnemonic {
			t.Fatalf("stored secret %q", got)
		}
		for range 2 { // revealing does not consume the secret
			r := mustCall(t, "revealSecret", secret)
			if r.Type() != js.TypeString || r.String() != exportMnemonic {
				t.Fatalf("revealSecret = %v", r)
			}
		}
		mustCall(t, "forget", secret)
		mustCall(t, "forget", stringField(t, v, "secret"))
	}

	// Non-ASCII, empty and long plaintexts come back as they went in.
	for _, pt := range []string{"", "crème brûlée ✓ 𝄞", strings.Repeat("abandon ", 1000)} {
		b, s := exportBundle(t, client.public, pt)
		secret := openSecret(t, client.handle, b, s.pub.UncompressedHex())
		if r := mustCall(t, "revealSecret", secret); r.String() != pt {
			t.Fatalf("revealSecret = %q, want %q", r.String(), pt)
		}
		mustCall(t, "forget", secret)
	}

	pinned := signer.pub.UncompressedHex()
	// A high-S signature is as good as a low-S one.
	for _, f := range []func(r, s *big.Int) (*big.Int, *big.Int){highS, lowS} {
		secret := openSecret(t, client.handle, withSignature(t, bundle, f), pinned)
		if got := storedSecret(t, secret); string(got) != exportMnemonic {
			t.Fatalf("stored secret %q", got)
		}
		mustCall(t, "forget", secret)
	}

	other := newSigner(t)
	stranger := newStdECDH(t)
	for _, tt := range []struct {
		name, bundle, pinned, want string
	}{
		{"wrong signer", bundle, other.pub.UncompressedHex(), "export bundle is not signed by the pinned signer"},
		// A bundle that names the pinned signer but was signed by another key.
		{"forged signer", strings.Replace(bundle, pinned, other.pub.UncompressedHex(), 1), other.pub.UncompressedHex(),
			"export bundle signature does not verify"},
		{"tampered signature", withSignature(t, bundle, bumpS), pinned, "export bundle signature does not verify"},
		{"tampered data", tamperExportData(t, signer, bundle), pinned, "export bundle signature does not verify"},
		// Sealed to somebody else, correctly signed.
		{"sealed to another key", signedExportBundle(t, signer, stranger.PublicKey(), exportOrg, []byte(exportMnemonic)), pinned,
			"export bundle does not open with this key"},
		{"tampered ciphertext", tamperCiphertext(t, signer, bundle), pinned, "export bundle does not open with this key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantReject(t, "openExportBundle: "+tt.want, "openExportBundle", client.handle, tt.bundle, tt.pinned)
		})
	}
	// A target bundle is not an export bundle.
	tb := signer.envelope(t, targetData(client.public), nil)
	if _, err := call(t, "openExportBundle", client.handle, tb, pinned); err == nil ||
		!strings.HasPrefix(err.Error(), "openExportBundle: invalid export bundle: ") {
		t.Fatalf("target bundle: got %v", err)
	}
	_, err := call(t, "openExportBundle", client.handle, "{}", pinned)
	if err == nil || !strings.HasPrefix(err.Error(), "openExportBundle: invalid export bundle: ") {
		t.Fatalf("garbage bundle: got %v", err)
	}
	// The key survives all of that.
	mustCall(t, "forget", openSecret(t, client.handle, bundle, pinned))
}

// tamperExportData changes the organizationId inside a signed export
// bundle, keeping the signature.
func tamperExportData(t *testing.T, signer *stdSigner, bundle string) string {
	t.Helper()
	tb := parseEnvelope(t, bundle)
	tampered := bytes.Replace(tb.Data, []byte(exportOrg), []byte(exportOrg[:len(exportOrg)-1]+"2"), 1)
	if bytes.Equal(tampered, tb.Data) {
		t.Fatal("nothing to tamper with")
	}
	tb.Data = tampered
	return tb.Encode()
}

// tamperCiphertext flips a bit of the sealed mnemonic and signs the result
// properly: the signature verifies, the seal does not open.
func tamperCiphertext(t *testing.T, signer *stdSigner, bundle string) string {
	t.Helper()
	var data map[string]string
	if err := json.Unmarshal(parseEnvelope(t, bundle).Data, &data); err != nil {
		t.Fatal(err)
	}
	ct := hexBytes(t, data["ciphertext"])
	ct[0] ^= 1
	out, err := json.Marshal(struct {
		EncappedPublic string `json:"encappedPublic"`
		Ciphertext     string `json:"ciphertext"`
		OrganizationID string `json:"organizationId"`
	}{data["encappedPublic"], hex.EncodeToString(ct), data["organizationId"]})
	if err != nil {
		t.Fatal(err)
	}
	return signer.envelope(t, out, nil)
}

// TestSecretHandles: secret handles and key handles are not interchangeable,
// and forget zeroes a secret.
func TestSecretHandles(t *testing.T) {
	client := newKey(t, "recipient")
	defer mustCall(t, "forget", client.handle)
	signing := newKey(t, "signing")
	defer mustCall(t, "forget", signing.handle)
	bundle, signer := exportBundle(t, client.public, exportMnemonic)
	pinned := signer.pub.UncompressedHex()
	secret := openSecret(t, client.handle, bundle, pinned)
	target, targetSigner, _ := targetBundle(t)

	wantReject(t, "stamp: unknown key handle", "stamp", secret, "payload")
	wantReject(t, "sealOtp: unknown key handle", "sealOtp", secret, "123456", target, targetSigner.pub.UncompressedHex())
	wantReject(t, "decryptSessionKey: unknown key handle", "decryptSessionKey", secret, "3yZe7d")
	wantReject(t, "openExportBundle: unknown key handle", "openExportBundle", secret, bundle, pinned)
	wantReject(t, "storeSession: unknown key handle", "storeSession", secret, sessionObject("Session:1", dateNow()+1000))
	wantReject(t, "revealSecret: unknown secret handle", "revealSecret", client.handle)
	wantReject(t, "revealSecret: unknown secret handle", "revealSecret", signing.handle)
	mustCall(t, "stamp", signing.handle, "the keys still work")
	mustCall(t, "forget", openSecret(t, client.handle, bundle, pinned))

	b := storedSecret(t, secret)
	if v := mustCall(t, "forget", secret); !v.Bool() {
		t.Fatal("forget(secret) = false")
	}
	if !bytes.Equal(b, make([]byte, len(b))) {
		t.Fatalf("forgotten secret not zeroed: %q", b)
	}
	wantReject(t, "revealSecret: unknown secret handle", "revealSecret", secret)
	if v := mustCall(t, "forget", secret); v.Bool() {
		t.Fatal("second forget(secret) = true")
	}
}

func TestSetExpiry(t *testing.T) {
	t.Run("lazy check", func(t *testing.T) {
		k := newKey(t, "signing")
		e := entryOf(testKeys, k.handle)
		if v := mustCall(t, "setExpiry", k.handle, dateNow()+60_000); v.Type() != js.TypeBoolean || !v.Bool() {
			t.Fatalf("setExpiry = %v, want true", v)
		}
		mustCall(t, "stamp", k.handle, "before")
		// Move the expiry into the past without the timer noticing.
		testKeys.mu.Lock()
		testKeys.entries[k.handle].expiry = int64(dateNow()) - 1
		testKeys.mu.Unlock()
		wantReject(t, "stamp: unknown key handle", "stamp", k.handle, "after")
		if stored(k.handle) || e.key != nil {
			t.Fatal("expired key still stored or still referenced")
		}
		if !e.timer.IsUndefined() {
			t.Fatal("expired key's timer still set")
		}
		if v := mustCall(t, "forget", k.handle); v.Bool() {
			t.Fatal("forget(expired) = true")
		}
	})

	t.Run("every method treats an expired key as unknown", func(t *testing.T) {
		bundle, signer, _ := targetBundle(t)
		pinned := signer.pub.UncompressedHex()
		for _, c := range []struct {
			method  string
			purpose string
			args    func(handle string) []any
		}{
			{"stamp", "signing", func(h string) []any { return []any{h, "p"} }},
			{"sealOtp", "signing", func(h string) []any { return []any{h, "123456", bundle, pinned} }},
			{"storeSession", "signing", func(h string) []any { return []any{h, sessionObject("Session:1", dateNow()+1000)} }},
			{"decryptSessionKey", "recipient", func(h string) []any { return []any{h, "3yZe7d"} }},
			{"openExportBundle", "recipient", func(h string) []any { return []any{h, "{}", pinned} }},
			{"setExpiry", "signing", func(h string) []any { return []any{h, dateNow() + 1000} }},
			{"setExpiry", "recipient", func(h string) []any { return []any{h, dateNow() + 1000} }},
		} {
			k := newKey(t, c.purpose)
			mustCall(t, "setExpiry", k.handle, dateNow()+60_000)
			testKeys.mu.Lock()
			testKeys.entries[k.handle].expiry = 1
			testKeys.mu.Unlock()
			want := c.method + ": unknown key handle"
			if c.method == "setExpiry" {
				want = "setExpiry: unknown handle"
			}
			wantReject(t, want, c.method, c.args(k.handle)...)
			if stored(k.handle) {
				t.Fatalf("%s left the expired key in the store", c.method)
			}
		}
	})

	t.Run("timer wipes without a call", func(t *testing.T) {
		for _, p := range []string{"signing", "recipient"} {
			k := newKey(t, p)
			e := entryOf(testKeys, k.handle)
			mustCall(t, "setExpiry", k.handle, dateNow()+100)
			if p == "signing" {
				mustCall(t, "stamp", k.handle, "before")
			}
			waitGone(t, k.handle)
			if e.key != nil {
				t.Fatal("expired key still referenced")
			}
			if p == "signing" {
				wantReject(t, "stamp: unknown key handle", "stamp", k.handle, "after")
			} else {
				wantReject(t, "decryptSessionKey: unknown key handle", "decryptSessionKey", k.handle, "3yZe7d")
			}
		}
	})

	t.Run("secret", func(t *testing.T) {
		client := newKey(t, "recipient")
		defer mustCall(t, "forget", client.handle)
		bundle, signer := exportBundle(t, client.public, exportMnemonic)
		secret := openSecret(t, client.handle, bundle, signer.pub.UncompressedHex())
		b := storedSecret(t, secret)
		mustCall(t, "setExpiry", secret, dateNow()+100)
		waitGone(t, secret)
		if !bytes.Equal(b, make([]byte, len(b))) {
			t.Fatal("expired secret not zeroed")
		}
		wantReject(t, "revealSecret: unknown secret handle", "revealSecret", secret)
	})

	t.Run("a past time wipes at once", func(t *testing.T) {
		k := newKey(t, "signing")
		if v := mustCall(t, "setExpiry", k.handle, 1); v.Type() != js.TypeBoolean || v.Bool() {
			t.Fatalf("setExpiry(past) = %v, want false", v)
		}
		if stored(k.handle) {
			t.Fatal("key still stored")
		}
		wantReject(t, "stamp: unknown key handle", "stamp", k.handle, "after")
	})

	t.Run("a later expiry replaces an earlier one", func(t *testing.T) {
		k := newKey(t, "signing")
		mustCall(t, "setExpiry", k.handle, dateNow()+100)
		mustCall(t, "setExpiry", k.handle, dateNow()+60_000)
		time.Sleep(300 * time.Millisecond)
		mustCall(t, "stamp", k.handle, "still here")
		// And an earlier one replaces a later one.
		mustCall(t, "setExpiry", k.handle, dateNow()+100)
		waitGone(t, k.handle)
	})

	t.Run("beyond the longest setTimeout delay", func(t *testing.T) {
		k := newKey(t, "signing")
		// 40 days: a timer set to that would overflow and fire at once.
		mustCall(t, "setExpiry", k.handle, dateNow()+40*24*3600*1000)
		time.Sleep(100 * time.Millisecond)
		mustCall(t, "stamp", k.handle, "still here")
		e := entryOf(testKeys, k.handle)
		if e == nil || e.timer.IsUndefined() {
			t.Fatal("no timer scheduled")
		}
		mustCall(t, "forget", k.handle)
		if !e.timer.IsUndefined() {
			t.Fatal("forget left the timer running")
		}
	})

	t.Run("arguments", func(t *testing.T) {
		k := newKey(t, "signing")
		defer mustCall(t, "forget", k.handle)
		const msg = "setExpiry: expiresAtMs must be a positive number of milliseconds (Date.now())"
		for _, at := range []any{"1700000000000", js.Null(), js.Undefined(), 0, -5, js.Global().Get("NaN"),
			js.Global().Get("Infinity"), float64(1 << 53), js.Global().Get("Date").New()} {
			wantReject(t, msg, "setExpiry", k.handle, at)
		}
		mustCall(t, "stamp", k.handle, "untouched")
	})
}

// waitGone waits up to two seconds for the timer to drop handle from the
// store, without calling any method that would check expiry itself.
func waitGone(t *testing.T, handle string) {
	t.Helper()
	waitGoneFrom(t, testKeys, handle)
}

func waitGoneFrom(t *testing.T, ks *keyStore, handle string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		if entryOf(ks, handle) == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the timer did not drop the handle")
}
