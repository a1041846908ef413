package wire

import (
	"bytes"
	"testing"
)

func TestWebAuthnUserHandle(t *testing.T) {
	cases := []struct {
		id   string
		want []byte
	}{
		{"InternalAccount:0199a3c4-0000-7000-8000-0000000000aa", []byte{0x01, 0x99, 0xa3, 0xc4, 0, 0, 0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, 0xaa}},
		{"InternalAccount:0199A3C4-0000-7000-8000-0000000000AA", []byte{0x01, 0x99, 0xa3, 0xc4, 0, 0, 0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, 0xaa}},
		{"Customer:0199a3c4-0000-7000-8000-0000000000aa", nil},
		{"InternalAccount:0199a3c4-0000-7000-8000-0000000000a", nil},
		{"InternalAccount:0199a3c4+0000-7000-8000-0000000000aa", nil},
		{"InternalAccount:0199a3c4-0000-7000-8000-0000000000zz", nil},
		{"", nil},
	}
	for _, tc := range cases {
		got, ok := WebAuthnUserHandle(tc.id)
		if ok != (tc.want != nil) || !bytes.Equal(got, tc.want) {
			t.Errorf("WebAuthnUserHandle(%q) = %x, %v; want %x", tc.id, got, ok, tc.want)
		}
	}
}
