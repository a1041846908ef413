//go:build !js

package walletcrypto

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

const (
	fixturePriv = "487f361ddfd73440e707f4daa6775b376859e8a3c9f29b3bb694a12927c0213c"
	fixturePubC = "02f739f8c77b32f4d5f13265861febd76e7a9c61a1140d296b8c16302508870316"
	// curve order n and field prime p of P-256, big-endian hex.
	hexN = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551"
	hexP = "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff"
)

func fixturePubU(t testing.TB) string {
	t.Helper()
	return mustPrivateKey(t, fixturePriv).PublicKey().UncompressedHex()
}

func TestParsePublicKey(t *testing.T) {
	u := mustHex(t, fixturePubU(t))
	c := mustHex(t, fixturePubC)
	offCurve := bytes.Clone(u)
	offCurve[64] ^= 1
	yTooBig := bytes.Clone(u) // y replaced by y + p would not fit; use y = p instead
	copy(yTooBig[33:], mustHex(t, hexP))
	with := func(prefix byte, rest []byte) []byte { return append([]byte{prefix}, rest...) }
	x := func(h string) []byte { return mustHex(t, h) }

	tests := []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"uncompressed", u, true},
		{"compressed", c, true},
		{"compressed other parity", with(c[0]^1, c[1:]), true}, // the negated point
		{"x = 0 is on the curve", with(2, make([]byte, 32)), true},
		{"off curve", offCurve, false},
		{"y = p", yTooBig, false},
		{"x = p compressed", with(2, x(hexP)), false},
		{"x = 2^256-1 compressed", with(3, bytes.Repeat([]byte{0xff}, 32)), false},
		{"x = p uncompressed", append(with(4, x(hexP)), u[33:]...), false},
		{"x = 1 has no point", with(2, x(strings.Repeat("0", 63)+"1")), false},
		{"identity encoding", []byte{0}, false},
		{"all zero 65", make([]byte, 65), false},
		{"04 with zeros", with(4, make([]byte, 64)), false},
		{"prefix 05", with(5, c[1:]), false},
		{"prefix 04 on 33", with(4, c[1:]), false},
		{"prefix 02 on 65", with(2, u[1:]), false},
		{"prefix 06 hybrid", with(6, u[1:]), false},
		{"prefix 07 hybrid", with(7, u[1:]), false},
		{"empty", nil, false},
		{"32 bytes", c[1:], false},
		{"34 bytes", append(bytes.Clone(c), 0), false},
		{"64 bytes", u[1:], false},
		{"66 bytes", append(bytes.Clone(u), 0), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePublicKey(tt.in)
			if tt.ok != (err == nil) {
				t.Fatalf("ParsePublicKey(%x) err = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if !tt.ok {
				if p != nil || !isErr(err, ErrInvalidPublicKey) {
					t.Fatalf("got %v, %v; want nil and ErrInvalidPublicKey", p, err)
				}
				if !strings.HasPrefix(err.Error(), "walletcrypto: ") {
					t.Fatalf("message %q", err)
				}
				return
			}
			want := tt.in
			got := p.Uncompressed()
			if len(want) == 33 {
				got = p.Compressed()
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("re-encodes to %x", got)
			}
		})
	}
}

func TestPublicKeyEncodings(t *testing.T) {
	k := mustPrivateKey(t, fixturePriv)
	pc, err := ParsePublicKeyHex(fixturePubC)
	if err != nil {
		t.Fatal(err)
	}
	pu, err := ParsePublicKeyHex(strings.ToUpper(fixturePubU(t)))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*PublicKey{k.PublicKey(), pc, pu} {
		if !p.Equal(k.PublicKey()) || !k.PublicKey().Equal(p) {
			t.Fatal("Equal false for the same point")
		}
		if p.CompressedHex() != fixturePubC || p.UncompressedHex() != fixturePubU(t) {
			t.Fatalf("hex = %s / %s", p.CompressedHex(), p.UncompressedHex())
		}
		if len(p.Compressed()) != 33 || len(p.Uncompressed()) != 65 {
			t.Fatal("lengths")
		}
		if !bytes.Equal(testDecompress(t, p.Compressed()), p.Uncompressed()) {
			t.Fatal("compression disagrees with crypto/elliptic")
		}
	}
	// Returned slices are copies.
	u := pu.Uncompressed()
	u[1] ^= 0xff
	if !pu.Equal(pc) {
		t.Fatal("Uncompressed() aliases the key")
	}
	other := mustGenerateKey(t).PublicKey()
	if other.Equal(pc) {
		t.Fatal("Equal true for different points")
	}
	var nilKey *PublicKey
	if nilKey.Equal(pc) || pc.Equal(nil) || !nilKey.Equal(nil) {
		t.Fatal("nil handling")
	}
}

func TestParsePublicKeyHex(t *testing.T) {
	u := fixturePubU(t)
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"compressed", fixturePubC, true},
		{"uncompressed", u, true},
		{"upper case", strings.ToUpper(u), true},
		{"mixed case", "02F739f8C77B32f4d5f13265861febd76e7a9c61a1140d296b8c16302508870316", true},
		{"odd length", fixturePubC[:65], false},
		{"65 chars", u[:65], false},
		{"bad char", "0g" + fixturePubC[2:], false},
		{"0x prefix", "0x" + fixturePubC[2:], false},
		{"space", " " + fixturePubC[1:], false},
		{"trailing newline", fixturePubC[:65] + "\n", false},
		{"empty", "", false},
		{"raw 64 (no prefix)", u[2:], false},
		{"wrong prefix", "04" + fixturePubC[2:], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePublicKeyHex(tt.in)
			if tt.ok != (err == nil) || (err != nil && p != nil) {
				t.Fatalf("ParsePublicKeyHex(%q) = %v, %v", tt.in, p, err)
			}
			if err != nil && !isErr(err, ErrInvalidPublicKey) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestParseClientPublicKey(t *testing.T) {
	u := fixturePubU(t)
	tests := []struct {
		name, in         string
		ok, uncompressed bool
	}{
		{"spec form ^04[0-9a-fA-F]{128}$", u, true, true},
		{"spec form upper case", "04" + strings.ToUpper(u[2:]), true, true},
		{"compressed ^0[23][0-9a-fA-F]{64}$", fixturePubC, true, false},
		{"compressed 03", "03" + fixturePubC[2:], true, false},
		{"02 with 128 hex", "02" + u[2:], false, false},
		{"04 with 64 hex", "04" + fixturePubC[2:], false, false},
		{"upper 0X", "0X" + u[2:], false, false},
		{"131 chars", u + "0", false, false},
		{"trailing newline", u + "\n", false, false},
		{"off curve", offCurveHex(u), false, true},
		{"empty", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParseClientPublicKey(tt.in)
			if tt.ok != (err == nil) || (err != nil && p != nil) {
				t.Fatalf("ParseClientPublicKey(%q) = %v, %v", tt.in, p, err)
			}
			if err != nil && !isErr(err, ErrInvalidPublicKey) {
				t.Fatalf("err = %v", err)
			}
			if got := IsUncompressedHex(tt.in); got != tt.uncompressed {
				t.Fatalf("IsUncompressedHex = %v", got)
			}
		})
	}
}

func TestIsUncompressedHex(t *testing.T) {
	u := fixturePubU(t)
	for in, want := range map[string]bool{
		u:                               true,
		strings.ToUpper(u):              true,
		"04" + strings.Repeat("0", 128): true, // syntax only
		fixturePubC:                     false,
		u[:129]:                         false,
		u + "0":                         false,
		"05" + u[2:]:                    false,
		"04" + u[2:129] + "g":           false,
		"":                              false,
	} {
		if got := IsUncompressedHex(in); got != want {
			t.Errorf("IsUncompressedHex(%q) = %v", in, got)
		}
	}
}

func TestNewPrivateKey(t *testing.T) {
	n := mustHex(t, hexN)
	nMinus1 := bytes.Clone(n)
	nMinus1[31]--
	one := make([]byte, 32)
	one[31] = 1
	tests := []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"fixture", mustHex(t, fixturePriv), true},
		{"one", one, true},
		{"n-1", nMinus1, true},
		{"zero", make([]byte, 32), false},
		{"n", n, false},
		{"all ff", bytes.Repeat([]byte{0xff}, 32), false},
		{"31 bytes", one[1:], false},
		{"33 bytes", append([]byte{0}, one...), false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := NewPrivateKey(tt.in)
			if tt.ok != (err == nil) || (err != nil && k != nil) {
				t.Fatalf("NewPrivateKey(%x) = %v, %v", tt.in, k, err)
			}
			if err != nil {
				if !isErr(err, ErrInvalidPrivateKey) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if !bytes.Equal(k.Bytes(), tt.in) {
				t.Fatal("Bytes() differs")
			}
		})
	}
	// The input is copied.
	in := mustHex(t, fixturePriv)
	k, _ := NewPrivateKey(in)
	in[0] ^= 1
	if hex.EncodeToString(k.Bytes()) != fixturePriv {
		t.Fatal("NewPrivateKey aliases its input")
	}
}

func TestGenerateKey(t *testing.T) {
	a, b := mustGenerateKey(t), mustGenerateKey(t)
	if bytes.Equal(a.Bytes(), b.Bytes()) || a.PublicKey().Equal(b.PublicKey()) {
		t.Fatal("two generated keys are equal")
	}
	again, err := NewPrivateKey(a.Bytes())
	if err != nil || !again.PublicKey().Equal(a.PublicKey()) {
		t.Fatalf("round trip through Bytes: %v", err)
	}
}

func TestWipe(t *testing.T) {
	k := mustGenerateKey(t)
	pub := k.PublicKey()
	sealed, err := SealSessionKey(pub, mustGenerateKey(t))
	if err != nil {
		t.Fatal(err)
	}
	d := k.ecdsa.D // keep a handle to check the words are zeroed
	k.Wipe()
	if k.Bytes() != nil {
		t.Fatal("Bytes() after Wipe")
	}
	if d.Sign() != 0 {
		t.Fatal("ecdsa scalar not zeroed")
	}
	if _, err := SignStamp(k, []byte("x")); !isErr(err, ErrInvalidPrivateKey) {
		t.Fatalf("SignStamp after Wipe: %v", err)
	}
	if _, err := OpenSessionKey(k, sealed); !isErr(err, ErrInvalidPrivateKey) {
		t.Fatalf("OpenSessionKey after Wipe: %v", err)
	}
	if _, err := SealSessionKey(pub, k); !isErr(err, ErrInvalidPrivateKey) {
		t.Fatalf("SealSessionKey of a wiped key: %v", err)
	}
	if _, err := NewTargetBundle(k, pub); !isErr(err, ErrInvalidPrivateKey) {
		t.Fatalf("NewTargetBundle after Wipe: %v", err)
	}
	if !k.PublicKey().Equal(pub) {
		t.Fatal("public key lost")
	}
	k.Wipe() // idempotent
}

// TestConcurrentUse shares one private key and one public key between goroutines
// (run with -race).
func TestConcurrentUse(t *testing.T) {
	k := mustGenerateKey(t)
	sealed, err := SealSessionKey(k.PublicKey(), mustGenerateKey(t))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 16)
	for range 8 {
		go func() {
			h, err := SignStamp(k, []byte("p"))
			if err == nil {
				var st *Stamp
				if st, err = ParseStamp(h); err == nil {
					err = st.Verify([]byte("p"))
				}
			}
			errs <- err
		}()
		go func() {
			_, err := OpenSessionKey(k, sealed)
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestPrivateKeyNotPrinted(t *testing.T) {
	k := mustPrivateKey(t, fixturePriv)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%q"} {
		out := fmt.Sprintf(verb, k)
		if strings.Contains(out, fixturePriv[:16]) || strings.Contains(out, fmt.Sprintf(verb, k.scalar)) {
			t.Errorf("%s prints the scalar: %s", verb, out)
		}
	}
	if got := k.String(); got != "walletcrypto.PrivateKey("+fixturePubC+")" {
		t.Errorf("String() = %s", got)
	}
	if got := fmt.Sprint(k.PublicKey()); got != fixturePubC {
		t.Errorf("PublicKey prints as %s", got)
	}
}
