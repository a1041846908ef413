//go:build !js

package walletcrypto

import (
	"bytes"
	"strings"
	"testing"
)

func TestBundleRoundTrip(t *testing.T) {
	k := mustGenerateKey(t)
	s, err := SealBundle(k.PublicKey(), []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s, `{"encappedPublic":"04`) || !strings.Contains(s, `","ciphertext":"`) || strings.ContainsAny(s, " \n") {
		t.Fatalf("shape: %s", s)
	}
	b, err := ParseBundle(s)
	if err != nil {
		t.Fatal(err)
	}
	if b.Encode() != s || len(b.EncappedPublic) != 65 || len(b.Ciphertext) != 6+16 {
		t.Fatalf("Encode() = %s", b.Encode())
	}
	pt, err := OpenBundle(k, s)
	if err != nil || string(pt) != "secret" {
		t.Fatalf("OpenBundle = %q, %v", pt, err)
	}
	if _, err := OpenBundle(mustGenerateKey(t), s); !isErr(err, ErrDecrypt) {
		t.Fatalf("wrong key: %v", err)
	}
	// Tampering with either part fails authentication.
	ct := bytes.Clone(b.Ciphertext)
	ct[0] ^= 1
	if _, err := OpenBundle(k, Bundle{b.EncappedPublic, ct}.Encode()); !isErr(err, ErrDecrypt) {
		t.Fatalf("tampered ciphertext: %v", err)
	}
	other := mustGenerateKey(t).PublicKey().Uncompressed()
	if _, err := OpenBundle(k, Bundle{other, b.Ciphertext}.Encode()); !isErr(err, ErrDecrypt) {
		t.Fatalf("swapped enc: %v", err)
	}
}

func TestParseBundle(t *testing.T) {
	enc := mustGenerateKey(t).PublicKey().UncompressedHex()
	ct := strings.Repeat("ab", 20)
	mk := func(e, c string) string { return `{"encappedPublic":"` + e + `","ciphertext":"` + c + `"}` }
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"canonical", mk(enc, ct), true},
		{"reversed keys", `{"ciphertext":"` + ct + `","encappedPublic":"` + enc + `"}`, true},
		{"whitespace", "{ \"encappedPublic\" : \"" + enc + "\",\n \"ciphertext\": \"" + ct + "\" }", true},
		{"upper-case hex", mk(strings.ToUpper(enc), strings.ToUpper(ct)), true},
		{"16-byte ciphertext", mk(enc, strings.Repeat("00", 16)), true},
		{"15-byte ciphertext", mk(enc, strings.Repeat("00", 15)), false},
		{"empty ciphertext", mk(enc, ""), false},
		{"odd ciphertext hex", mk(enc, ct+"0"), false},
		{"bad ciphertext hex", mk(enc, "zz"+ct), false},
		{"compressed enc", mk(mustGenerateKey(t).PublicKey().CompressedHex(), ct), false},
		{"enc off curve", mk(offCurveHex(enc), ct), false},
		{"enc not hex", mk("04"+strings.Repeat("zz", 64), ct), false},
		{"missing ciphertext", `{"encappedPublic":"` + enc + `"}`, false},
		{"missing enc", `{"ciphertext":"` + ct + `"}`, false},
		{"unknown key", `{"encappedPublic":"` + enc + `","ciphertext":"` + ct + `","organizationId":"x"}`, false},
		{"duplicate key", `{"encappedPublic":"` + enc + `","ciphertext":"` + ct + `","ciphertext":"` + ct + `"}`, false},
		{"not JSON", "encappedPublic=" + enc, false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ParseBundle(tt.in)
			if tt.ok != (err == nil) {
				t.Fatalf("ParseBundle: %v, want ok=%v", err, tt.ok)
			}
			if err != nil {
				if b.EncappedPublic != nil || b.Ciphertext != nil || !isErr(err, ErrMalformed) {
					t.Fatalf("got %+v, %v", b, err)
				}
				return
			}
			again, err := ParseBundle(b.Encode())
			if err != nil || !bytes.Equal(again.EncappedPublic, b.EncappedPublic) || !bytes.Equal(again.Ciphertext, b.Ciphertext) {
				t.Fatalf("Encode does not round-trip: %v", err)
			}
		})
	}
}

func TestCredentialBundle(t *testing.T) {
	k := mustGenerateKey(t)
	s, err := SealCredentialBundle(k.PublicKey(), []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := Base58CheckDecode(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(payload) != 33+1+16 || (payload[0] != 2 && payload[0] != 3) {
		t.Fatalf("payload %x", payload)
	}
	if pt, err := OpenCredentialBundle(k, s); err != nil || string(pt) != "x" {
		t.Fatalf("OpenCredentialBundle = %q, %v", pt, err)
	}

	enc := payload[:33]
	tests := []struct {
		name, in string
		want     error
	}{
		{"not base58", "0OIl", ErrMalformed},
		{"bad checksum", flipLast(s), ErrMalformed},
		{"only enc", Base58CheckEncode(enc), ErrMalformed},
		{"shorter than enc", Base58CheckEncode(enc[:20]), ErrMalformed},
		{"enc with 04 prefix", Base58CheckEncode(append(append([]byte{4}, enc[1:]...), payload[33:]...)), ErrDecrypt},
		{"enc x not on curve", Base58CheckEncode(append(append([]byte{2}, mustHex(t, strings.Repeat("0", 63)+"1")...), payload[33:]...)), ErrDecrypt},
		{"enc parity flipped", Base58CheckEncode(append(append([]byte{enc[0] ^ 1}, enc[1:]...), payload[33:]...)), ErrDecrypt},
		{"ciphertext cut", Base58CheckEncode(payload[:len(payload)-1]), ErrDecrypt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pt, err := OpenCredentialBundle(k, tt.in)
			if pt != nil || !isErr(err, tt.want) {
				t.Fatalf("OpenCredentialBundle = %x, %v; want %v", pt, err, tt.want)
			}
		})
	}
}

// flipLast changes the last character of a base58 string to another digit.
func flipLast(s string) string {
	if s[len(s)-1] == '2' {
		return s[:len(s)-1] + "3"
	}
	return s[:len(s)-1] + "2"
}

func TestSessionKey(t *testing.T) {
	client := mustGenerateKey(t)
	session := mustGenerateKey(t)
	s, err := SealSessionKey(client.PublicKey(), session)
	if err != nil {
		t.Fatal(err)
	}
	got, err := OpenSessionKey(client, s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), session.Bytes()) || !got.PublicKey().Equal(session.PublicKey()) {
		t.Fatal("session key differs")
	}
	// A bundle whose plaintext is not a valid scalar is refused.
	bad, err := SealCredentialBundle(client.PublicKey(), mustHex(t, hexN))
	if err != nil {
		t.Fatal(err)
	}
	if k, err := OpenSessionKey(client, bad); k != nil || !isErr(err, ErrInvalidPrivateKey) {
		t.Fatalf("scalar n: %v, %v", k, err)
	}
	short, _ := SealCredentialBundle(client.PublicKey(), []byte{1})
	if k, err := OpenSessionKey(client, short); k != nil || !isErr(err, ErrInvalidPrivateKey) {
		t.Fatalf("1-byte scalar: %v, %v", k, err)
	}
}

func TestOpenEncForms(t *testing.T) {
	k := mustGenerateKey(t)
	enc, ct, err := Seal(k.PublicKey(), []byte("p"))
	if err != nil {
		t.Fatal(err)
	}
	encKey, _ := ParsePublicKey(enc)
	for name, e := range map[string][]byte{"65": enc, "33": encKey.Compressed()} {
		if pt, err := Open(k, e, ct); err != nil || string(pt) != "p" {
			t.Errorf("enc %s bytes: %q, %v", name, pt, err)
		}
	}
	for name, e := range map[string][]byte{"empty": nil, "64": enc[1:], "garbage": bytes.Repeat([]byte{9}, 65)} {
		if pt, err := Open(k, e, ct); pt != nil || !isErr(err, ErrDecrypt) {
			t.Errorf("enc %s: %q, %v", name, pt, err)
		}
	}
	if _, _, err := Seal(nil, []byte("p")); !isErr(err, ErrInvalidPublicKey) {
		t.Errorf("Seal(nil): %v", err)
	}
	if _, err := Open(nil, enc, ct); !isErr(err, ErrInvalidPrivateKey) {
		t.Errorf("Open(nil): %v", err)
	}
	if _, err := Open(&PrivateKey{}, enc, ct); !isErr(err, ErrInvalidPrivateKey) {
		t.Errorf("Open(zero key): %v", err)
	}
}
