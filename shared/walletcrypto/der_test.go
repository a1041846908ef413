//go:build !js

package walletcrypto

import (
	"bytes"
	"math/big"
	"strings"
	"testing"
)

// kat stamp signature: r and s both need the leading zero byte.
const katDER = "3046022100f6beeb57e67086195d4cf8af4f57125dc14eb54ca5156cd3b20e6f3e2d4cf1270221008420b21c2de0b91130b51ef749ed5f16aaf86e1280c1e777884d046c98a09a16"

func TestParseDERSignature(t *testing.T) {
	r32 := strings.Repeat("11", 32)
	s32 := strings.Repeat("22", 32)
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"kat", katDER, true},
		{"32-byte r and s", "3044" + "0220" + r32 + "0220" + s32, true},
		{"small r and s", "3006020101020101", true},
		{"short r with leading zero needed", "3007" + "020200ff" + "020101", true},
		{"s = n-1", "3026020101022100" + hexN[:62] + "50", true},
		{"s = n", "3026020101022100" + hexN, false},
		{"r = 0", "3006020100020101", false},
		{"empty", "", false},
		{"too short", "30060201010201", false},
		{"not a sequence", "3106020101020101", false},
		{"long-form length", "308106020101020101", false},
		{"length too long", "3007020101020101", false},
		{"length too short", "3005020101020101", false},
		{"trailing byte after sequence", "300602010102010100", false},
		{"trailing byte inside sequence", "300702010102010100", false},
		{"integer tag", "3006030101020101", false},
		{"zero-length integer", "30050200020101", false},
		{"negative r", "3006020181020101", false},
		{"non-minimal leading zero", "300702020001020101", false},
		{"non-minimal 00 before 7f", "30070202007f020101", false},
		{"34-byte integer", "3028022200" + "00" + r32 + "020101", false},
		{"r = 2^256-1", "3026022100" + strings.Repeat("ff", 32) + "020101", false},
		{"integer length past end", "3006020901020101", false},
		{"one integer only", "3003020101", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			der := mustHex(t, tt.in)
			r, s, err := ParseDERSignature(der)
			if tt.ok != (err == nil) {
				t.Fatalf("ParseDERSignature(%s): err = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if !tt.ok {
				if r != nil || s != nil || !isErr(err, ErrMalformed) {
					t.Fatalf("got %v, %v, %v", r, s, err)
				}
				return
			}
			again, err := EncodeDERSignature(r, s)
			if err != nil || !bytes.Equal(again, der) {
				t.Fatalf("re-encodes to %x (%v)", again, err)
			}
		})
	}
}

func TestEncodeDERSignatureRange(t *testing.T) {
	n := new(big.Int).Set(curveN)
	for _, v := range []*big.Int{nil, big.NewInt(0), big.NewInt(-1), n} {
		if der, err := EncodeDERSignature(v, big.NewInt(1)); err == nil {
			t.Errorf("EncodeDERSignature(%v, 1) = %x", v, der)
		}
		if der, err := EncodeDERSignature(big.NewInt(1), v); err == nil {
			t.Errorf("EncodeDERSignature(1, %v) = %x", v, der)
		}
	}
}

// highS returns der with s replaced by n - s.
func highS(t testing.TB, der []byte) []byte {
	t.Helper()
	r, s, err := ParseDERSignature(der)
	if err != nil {
		t.Fatal(err)
	}
	out, err := EncodeDERSignature(r, new(big.Int).Sub(curveN, s))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// FuzzP1363 checks DERFromP1363 against EncodeDERSignature and the round
// trip through P1363FromDER.
func FuzzP1363(f *testing.F) {
	f.Add(bytes.Repeat([]byte{1}, 64))
	f.Add(append(make([]byte, 63), 1))
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Add(append(append(make([]byte, 31), 0x80), bytes.Repeat([]byte{0x7f}, 32)...))
	f.Fuzz(func(t *testing.T, rs []byte) {
		der, err := DERFromP1363(rs)
		if len(rs) != 64 {
			if err == nil {
				t.Fatal("accepted a signature that is not 64 bytes")
			}
			return
		}
		r, s := new(big.Int).SetBytes(rs[:32]), new(big.Int).SetBytes(rs[32:])
		want, wantErr := EncodeDERSignature(r, s)
		if (err == nil) != (wantErr == nil) || !bytes.Equal(der, want) {
			t.Fatalf("DERFromP1363(%x) = %x, %v; EncodeDERSignature says %x, %v", rs, der, err, want, wantErr)
		}
		if err != nil {
			return
		}
		back, err := P1363FromDER(der)
		if err != nil || !bytes.Equal(back, rs) {
			t.Fatalf("round trip %x -> %x -> %x, %v", rs, der, back, err)
		}
	})
}
