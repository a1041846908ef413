//go:build js && wasm

package main

import (
	"syscall/js"
	"testing"

	"paywallet/shared/walletcrypto"
)

// TestStampFinisherIsReleased: a key's stamp finisher (fast.go) lives as
// long as the key: forgetting the key drops its public key from the
// finishers' table, so stamping many short-lived keys does not grow it, and
// a handle forgotten between two stamps signs no more.
func TestStampFinisherIsReleased(t *testing.T) {
	before := stampKeysLen()
	for range 20 {
		k := newKey(t, "signing")
		header := mustCall(t, "stamp", k.handle, `{"n":1}`).String()
		st, err := walletcrypto.ParseStamp(header)
		if err != nil || !st.PublicKey.Equal(k.public) {
			t.Fatalf("stamp %q: %v", header, err)
		}
		mustCall(t, "stamp", k.handle, `{"n":2}`) // the finisher is reused
		if !mustCall(t, "forget", k.handle).Bool() {
			t.Fatal("forget found no key")
		}
		wantReject(t, "stamp: unknown key handle", "stamp", k.handle, `{"n":3}`)
	}
	if after := stampKeysLen(); after != before {
		t.Errorf("the finishers' table holds %d keys after 20 stamped and forgotten, want %d", after, before)
	}
}

func stampKeysLen() int {
	stampKeys.mu.Lock()
	defer stampKeys.mu.Unlock()
	return len(stampKeys.entries)
}

// TestStampFinishesAfterForget: a stamp already signing when its key is
// forgotten (a refresh replacing the key, the expiry timer) still resolves
// with a stamp that verifies; the next one is refused.
func TestStampFinishesAfterForget(t *testing.T) {
	before := stampKeysLen()
	k := newKey(t, "signing")
	mustCall(t, "stamp", k.handle, `{"warm":1}`) // the finisher exists
	pending := js.Global().Get("paywallet").Call("stamp", k.handle, `{"n":1}`)
	if !mustCall(t, "forget", k.handle).Bool() {
		t.Fatal("forget found no key")
	}
	v, err := await(t, pending)
	if err != nil {
		t.Fatalf("the stamp under way when its key was forgotten: %v", err)
	}
	st, err := walletcrypto.ParseStamp(v.String())
	if err != nil || !st.PublicKey.Equal(k.public) {
		t.Fatalf("stamp %q: %v", v.String(), err)
	}
	wantReject(t, "stamp: unknown key handle", "stamp", k.handle, `{"n":2}`)
	if n := stampKeysLen(); n != before {
		t.Errorf("%d finishers after the key and its stamps are gone, want %d", n, before)
	}
}
