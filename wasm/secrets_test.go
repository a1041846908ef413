//go:build js && wasm

package main

// Tests of the export flow (openExportBundle, revealSecret), of secret
// handles, and of key expiry (setExpiry).

import (
	"bytes"
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

// exportBundle returns an export bundle of plaintext sealed to the client,
// signed by a new signer, with the signer.
func exportBundle(t *testing.T, client *walletcrypto.PublicKey, plaintext string) (string, *walletcrypto.PrivateKey) {
	t.Helper()
	signer, err := walletcrypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	b, err := walletcrypto.NewExportBundle(signer, client, exportOrg, []byte(plaintext))
	if err != nil {
		t.Fatal(err)
	}
	return b, signer
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
	client := newKey(t)
	defer mustCall(t, "forget", client.handle)
	bundle, signer := exportBundle(t, client.public, exportMnemonic)

	for _, pinned := range []string{
		signer.PublicKey().UncompressedHex(),
		signer.PublicKey().CompressedHex(),
		strings.ToUpper(signer.PublicKey().UncompressedHex()),
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

	// Non-ASCII and empty plaintexts come back as they went in.
	for _, pt := range []string{"", "crème brûlée ✓ 𝄞"} {
		b, s := exportBundle(t, client.public, pt)
		secret := openSecret(t, client.handle, b, s.PublicKey().UncompressedHex())
		if r := mustCall(t, "revealSecret", secret); r.String() != pt {
			t.Fatalf("revealSecret = %q, want %q", r.String(), pt)
		}
		mustCall(t, "forget", secret)
	}

	pinned := signer.PublicKey().UncompressedHex()
	other, err := walletcrypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	wantReject(t, "openExportBundle: export bundle is not signed by the pinned signer",
		"openExportBundle", client.handle, bundle, other.PublicKey().UncompressedHex())
	// A bundle that names the pinned signer but was signed by another key.
	forged := strings.Replace(bundle, pinned, other.PublicKey().UncompressedHex(), 1)
	wantReject(t, "openExportBundle: export bundle signature does not verify",
		"openExportBundle", client.handle, forged, other.PublicKey().UncompressedHex())
	// Sealed to somebody else, correctly signed.
	stranger, _ := walletcrypto.GenerateKey()
	foreign, _ := walletcrypto.NewExportBundle(signer, stranger.PublicKey(), exportOrg, []byte(exportMnemonic))
	wantReject(t, "openExportBundle: export bundle does not open with this key",
		"openExportBundle", client.handle, foreign, pinned)
	// A target bundle is not an export bundle.
	tb, _ := walletcrypto.NewTargetBundle(signer, client.public)
	if _, err := call(t, "openExportBundle", client.handle, tb, pinned); err == nil ||
		!strings.HasPrefix(err.Error(), "openExportBundle: invalid export bundle: ") {
		t.Fatalf("target bundle: got %v", err)
	}
	_, err = call(t, "openExportBundle", client.handle, "{}", pinned)
	if err == nil || !strings.HasPrefix(err.Error(), "openExportBundle: invalid export bundle: ") {
		t.Fatalf("garbage bundle: got %v", err)
	}
}

// TestSecretHandles: secret handles and key handles are not interchangeable,
// and forget zeroes a secret.
func TestSecretHandles(t *testing.T) {
	client := newKey(t)
	defer mustCall(t, "forget", client.handle)
	bundle, signer := exportBundle(t, client.public, exportMnemonic)
	pinned := signer.PublicKey().UncompressedHex()
	secret := openSecret(t, client.handle, bundle, pinned)
	target, targetSigner, _ := targetBundle(t)

	wantReject(t, "stamp: unknown key handle", "stamp", secret, "payload")
	wantReject(t, "sealOtp: unknown key handle", "sealOtp", secret, "123456", target, targetSigner.PublicKey().UncompressedHex())
	wantReject(t, "decryptSessionKey: unknown key handle", "decryptSessionKey", secret, "3yZe7d")
	wantReject(t, "openExportBundle: unknown key handle", "openExportBundle", secret, bundle, pinned)
	wantReject(t, "revealSecret: unknown secret handle", "revealSecret", client.handle)
	mustCall(t, "stamp", client.handle, "the key still works")

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
		k := newKey(t)
		key := storedKey(t, k.handle)
		if v := mustCall(t, "setExpiry", k.handle, dateNow()+60_000); v.Type() != js.TypeBoolean || !v.Bool() {
			t.Fatalf("setExpiry = %v, want true", v)
		}
		mustCall(t, "stamp", k.handle, "before")
		// Move the expiry into the past without the timer noticing.
		testKeys.mu.Lock()
		testKeys.entries[k.handle].expiry = int64(dateNow()) - 1
		testKeys.mu.Unlock()
		wantReject(t, "stamp: unknown key handle", "stamp", k.handle, "after")
		if stored(k.handle) || key.Bytes() != nil {
			t.Fatal("expired key still stored or not wiped")
		}
		if v := mustCall(t, "forget", k.handle); v.Bool() {
			t.Fatal("forget(expired) = true")
		}
	})

	t.Run("every method treats an expired key as unknown", func(t *testing.T) {
		bundle, signer, _ := targetBundle(t)
		pinned := signer.PublicKey().UncompressedHex()
		for _, c := range []struct {
			method string
			args   func(handle string) []any
		}{
			{"stamp", func(h string) []any { return []any{h, "p"} }},
			{"sealOtp", func(h string) []any { return []any{h, "123456", bundle, pinned} }},
			{"decryptSessionKey", func(h string) []any { return []any{h, "3yZe7d"} }},
			{"openExportBundle", func(h string) []any { return []any{h, "{}", pinned} }},
			{"setExpiry", func(h string) []any { return []any{h, dateNow() + 1000} }},
		} {
			k := newKey(t)
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
		k := newKey(t)
		key := storedKey(t, k.handle)
		mustCall(t, "setExpiry", k.handle, dateNow()+100)
		mustCall(t, "stamp", k.handle, "before")
		waitGone(t, k.handle)
		if key.Bytes() != nil {
			t.Fatal("expired key not wiped")
		}
		wantReject(t, "stamp: unknown key handle", "stamp", k.handle, "after")
	})

	t.Run("secret", func(t *testing.T) {
		client := newKey(t)
		defer mustCall(t, "forget", client.handle)
		bundle, signer := exportBundle(t, client.public, exportMnemonic)
		secret := openSecret(t, client.handle, bundle, signer.PublicKey().UncompressedHex())
		b := storedSecret(t, secret)
		mustCall(t, "setExpiry", secret, dateNow()+100)
		waitGone(t, secret)
		if !bytes.Equal(b, make([]byte, len(b))) {
			t.Fatal("expired secret not zeroed")
		}
		wantReject(t, "revealSecret: unknown secret handle", "revealSecret", secret)
	})

	t.Run("a past time wipes at once", func(t *testing.T) {
		k := newKey(t)
		if v := mustCall(t, "setExpiry", k.handle, 1); v.Type() != js.TypeBoolean || v.Bool() {
			t.Fatalf("setExpiry(past) = %v, want false", v)
		}
		if stored(k.handle) {
			t.Fatal("key still stored")
		}
		wantReject(t, "stamp: unknown key handle", "stamp", k.handle, "after")
	})

	t.Run("a later expiry replaces an earlier one", func(t *testing.T) {
		k := newKey(t)
		mustCall(t, "setExpiry", k.handle, dateNow()+100)
		mustCall(t, "setExpiry", k.handle, dateNow()+60_000)
		time.Sleep(300 * time.Millisecond)
		mustCall(t, "stamp", k.handle, "still here")
		// And an earlier one replaces a later one.
		mustCall(t, "setExpiry", k.handle, dateNow()+100)
		waitGone(t, k.handle)
	})

	t.Run("beyond the longest setTimeout delay", func(t *testing.T) {
		k := newKey(t)
		// 40 days: a timer set to that would overflow and fire at once.
		mustCall(t, "setExpiry", k.handle, dateNow()+40*24*3600*1000)
		time.Sleep(100 * time.Millisecond)
		mustCall(t, "stamp", k.handle, "still here")
		testKeys.mu.Lock()
		e := testKeys.entries[k.handle]
		testKeys.mu.Unlock()
		if e.timer.IsUndefined() {
			t.Fatal("no timer scheduled")
		}
		mustCall(t, "forget", k.handle)
		if !e.timer.IsUndefined() {
			t.Fatal("forget left the timer running")
		}
	})

	t.Run("arguments", func(t *testing.T) {
		k := newKey(t)
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
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		if !stored(handle) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the timer did not drop the handle")
}
