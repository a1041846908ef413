//go:build !js

package walletcrypto

import (
	"bytes"
	"testing"
)

func TestBase58Check(t *testing.T) {
	tests := []struct {
		name    string
		payload []byte
	}{
		{"empty payload", []byte{}},
		{"one zero", []byte{0}},
		{"leading zeros", []byte{0, 0, 0, 1, 2, 3}},
		{"all ff", bytes.Repeat([]byte{0xff}, 40)},
		{"compressed key", mustHex(t, fixturePubC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Base58CheckEncode(tt.payload)
			if s != testBase58Check(tt.payload) {
				t.Fatalf("Base58CheckEncode = %s, independent = %s", s, testBase58Check(tt.payload))
			}
			got, err := Base58CheckDecode(s)
			if err != nil || !bytes.Equal(got, tt.payload) {
				t.Fatalf("Base58CheckDecode(%s) = %x, %v", s, got, err)
			}
			// Leading zero bytes become leading '1's.
			for i := 0; i < len(tt.payload) && tt.payload[i] == 0; i++ {
				if s[i] != '1' {
					t.Fatalf("%s: zero byte %d not '1'", s, i)
				}
			}
		})
	}
}

func TestBase58CheckDecodeErrors(t *testing.T) {
	good := Base58CheckEncode([]byte("hello"))
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"zero char", "0" + good},
		{"capital O", "O" + good},
		{"capital I", good + "I"},
		{"lower l", "l"},
		{"plus", good[:3] + "+" + good[3:]},
		{"space", good + " "},
		{"non-ASCII", good + "é"},
		{"one byte", "2"},
		{"three zero bytes", "111"},
		{"four zero bytes, bad checksum", "1111"},
		{"bad checksum", flipLast(good)},
		{"truncated", good[:len(good)-1]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Base58CheckDecode(tt.in)
			if err == nil || got != nil || !isErr(err, ErrMalformed) {
				t.Fatalf("Base58CheckDecode(%q) = %x, %v", tt.in, got, err)
			}
		})
	}
}
