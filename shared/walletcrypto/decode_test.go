package walletcrypto

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/mr-tron/base58"
)

// FuzzDecodeHex checks decodeHex against encoding/hex, which it stands in
// for so that the wasm module does not link fmt.
func FuzzDecodeHex(f *testing.F) {
	for _, s := range []string{"", "00", "0aFf", "abc", "zz", "0g", "ABCDEF0123456789", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := decodeHex(s)
		want, werr := hex.DecodeString(s)
		if (err == nil) != (werr == nil) || (err == nil && !bytes.Equal(got, want)) {
			t.Fatalf("decodeHex(%q) = %x, %v; encoding/hex says %x, %v", s, got, err, want, werr)
		}
	})
}

// FuzzDecodeBase58 checks the wasm build's base58 decoder against
// github.com/mr-tron/base58, which the host build uses, on any string and
// on the encoding of any bytes.
func FuzzDecodeBase58(f *testing.F) {
	for _, s := range []string{"", "1", "111", "11z", "z", "2g", "0", "I", "l", "O", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", "1111111111111111111111111111112"} {
		f.Add(s, []byte(s))
	}
	f.Add("", []byte{0, 0, 1, 2, 255})
	f.Fuzz(func(t *testing.T, s string, b []byte) {
		got, ok := decodeBase58(s)
		want, err := base58.Decode(s)
		if ok != (err == nil) || (ok && !bytes.Equal(got, want)) {
			t.Fatalf("decodeBase58(%q) = %x, %v; mr-tron/base58 says %x, %v", s, got, ok, want, err)
		}
		enc := base58.Encode(b)
		if got, ok := decodeBase58(enc); len(b) > 0 && (!ok || !bytes.Equal(got, b)) {
			t.Fatalf("decodeBase58(Encode(%x)) = %x, %v", b, got, ok)
		}
	})
}
