//go:build js && wasm

package main

import (
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
	return len(stampKeys.pub)
}
