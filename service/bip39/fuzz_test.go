package bip39

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// FuzzFromEntropy: every valid length encodes to a valid mnemonic that
// decodes to the same entropy; every other length is refused.
func FuzzFromEntropy(f *testing.F) {
	for _, v := range loadVectors(f) {
		e, _ := hex.DecodeString(v.Entropy)
		f.Add(e)
	}
	f.Add([]byte{})
	f.Add(make([]byte, 15))
	f.Add(make([]byte, 33))
	f.Fuzz(func(t *testing.T, entropy []byte) {
		m, err := FromEntropy(entropy)
		if err != nil {
			if m != "" || err != ErrEntropyLength {
				t.Fatalf("FromEntropy(%x) = %q, %v", entropy, m, err)
			}
			return
		}
		back, err := Entropy(m)
		if err != nil || !bytes.Equal(back, entropy) {
			t.Fatalf("Entropy(FromEntropy(%x)) = %x, %v", entropy, back, err)
		}
		if !Valid(m) {
			t.Fatalf("Valid(FromEntropy(%x)) = false", entropy)
		}
	})
}

// FuzzEntropy: parsing any string never panics, fails with a nil result, and
// whatever parses is in canonical form (re-encodes to itself).
func FuzzEntropy(f *testing.F) {
	for _, v := range loadVectors(f) {
		f.Add(v.Mnemonic)
	}
	f.Add("")
	f.Add(" ")
	f.Add("abandon  abandon")
	f.Add("zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo")
	f.Add("ABANDON abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about")
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Entropy(s)
		if Valid(s) != (err == nil) {
			t.Fatalf("Valid(%q) disagrees with Entropy: %v", s, err)
		}
		if err != nil {
			if e != nil {
				t.Fatalf("Entropy(%q) = %x with error %v", s, e, err)
			}
			return
		}
		m, err := FromEntropy(e)
		if err != nil || m != s {
			t.Fatalf("FromEntropy(Entropy(%q)) = %q, %v", s, m, err)
		}
	})
}
