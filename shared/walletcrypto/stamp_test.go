//go:build !js

package walletcrypto

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestSignStamp(t *testing.T) {
	k := mustPrivateKey(t, fixturePriv)
	payload := []byte(`{"organizationId":"00000000-0000-0000-0000-000000000000"}`)
	h, err := SignStamp(k, payload)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil || strings.ContainsAny(h, "=+/") {
		t.Fatalf("not unpadded base64url: %s", h)
	}
	st, err := ParseStamp(h)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"publicKey":"` + fixturePubC + `","scheme":"SIGNATURE_SCHEME_TK_API_P256","signature":"` + hex.EncodeToString(st.Signature) + `"}`
	if string(raw) != want {
		t.Fatalf("stamp JSON = %s\nwant %s", raw, want)
	}
	if err := st.Verify(payload); err != nil {
		t.Fatal(err)
	}
	if st.Encode() != h {
		t.Fatal("Encode does not reproduce the header")
	}
	if err := st.Verify(append(payload, ' ')); !isErr(err, ErrInvalidSignature) {
		t.Fatalf("changed payload: %v", err)
	}
	// A stamp signed by one key but naming another fails.
	other := mustGenerateKey(t)
	forged := &Stamp{PublicKey: other.PublicKey(), Scheme: StampScheme, Signature: st.Signature}
	if err := forged.Verify(payload); !isErr(err, ErrInvalidSignature) {
		t.Fatalf("other key: %v", err)
	}
	h2, _ := SignStamp(other, payload)
	st2, _ := ParseStamp(h2)
	if st2.PublicKey.Equal(k.PublicKey()) {
		t.Fatal("stamp names the wrong key")
	}
	if err := (&Stamp{PublicKey: k.PublicKey(), Scheme: StampScheme, Signature: st2.Signature}).Verify(payload); !isErr(err, ErrInvalidSignature) {
		t.Fatalf("signature by another key verified: %v", err)
	}
	if err := (&Stamp{Scheme: StampScheme, Signature: st.Signature}).Verify(payload); !isErr(err, ErrInvalidSignature) {
		t.Fatalf("nil key: %v", err)
	}
	if err := (&Stamp{PublicKey: k.PublicKey(), Scheme: "x", Signature: st.Signature}).Verify(payload); !isErr(err, ErrInvalidSignature) {
		t.Fatalf("bad scheme: %v", err)
	}
}

func TestParseStamp(t *testing.T) {
	k := mustPrivateKey(t, fixturePriv)
	payload := []byte(`{"organizationId":"00000000-0000-0000-0000-000000000000"}`)
	sig := mustHex(t, katDER)
	sigHex := katDER
	lowS := hex.EncodeToString(highS(t, sig)) // the KAT signature is high-S; n - s is low
	u := k.PublicKey().UncompressedHex()
	js := func(pub, scheme, sig string) string {
		return b64(`{"publicKey":"` + pub + `","scheme":"` + scheme + `","signature":"` + sig + `"}`)
	}

	valid := []struct{ name, in string }{
		{"JS key order", js(fixturePubC, StampScheme, sigHex)},
		{"Go SDK key order", b64(`{"publicKey":"` + fixturePubC + `","signature":"` + sigHex + `","scheme":"` + StampScheme + `"}`)},
		{"any key order", b64(`{"signature":"` + sigHex + `","scheme":"` + StampScheme + `","publicKey":"` + fixturePubC + `"}`)},
		{"whitespace", b64("{\n  \"publicKey\": \"" + fixturePubC + "\",\n  \"scheme\": \"" + StampScheme + "\",\n  \"signature\": \"" + sigHex + "\"\n}")},
		{"uncompressed key", js(u, StampScheme, sigHex)},
		{"upper-case hex", js(strings.ToUpper(fixturePubC), StampScheme, strings.ToUpper(sigHex))},
		{"high S (the KAT)", js(fixturePubC, StampScheme, sigHex)},
		{"low S (n - s)", js(fixturePubC, StampScheme, lowS)},
	}
	for _, tt := range valid {
		t.Run(tt.name, func(t *testing.T) {
			st, err := ParseStamp(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Verify(payload); err != nil {
				t.Fatal(err)
			}
			again, err := ParseStamp(st.Encode())
			if err != nil || again.Encode() != st.Encode() || !again.PublicKey.Equal(st.PublicKey) {
				t.Fatalf("Encode does not round-trip: %v", err)
			}
		})
	}

	invalid := []struct {
		name, in string
		reason   StampErrorReason
	}{
		{"empty", "", StampEmpty},
		{"not base64", "!!!", StampBadBase64},
		{"padded", js(fixturePubC, StampScheme, sigHex) + "==", StampBadBase64},
		{"standard alphabet", strings.NewReplacer("-", "+", "_", "/").Replace(js(fixturePubC, StampScheme, sigHex)) + "+/", StampBadBase64},
		{"line break", js(fixturePubC, StampScheme, sigHex)[:20] + "\n" + js(fixturePubC, StampScheme, sigHex)[20:], StampBadBase64},
		{"non-zero trailing bits", b64("{}")[:2] + "f", StampBadBase64},
		{"not JSON", b64("publicKey=" + fixturePubC), StampBadJSON},
		{"JSON array", b64(`["` + fixturePubC + `"]`), StampBadJSON},
		{"non-string value", b64(`{"publicKey":"` + fixturePubC + `","scheme":1,"signature":"` + sigHex + `"}`), StampBadJSON},
		{"duplicate key", b64(`{"publicKey":"` + fixturePubC + `","publicKey":"` + fixturePubC + `","scheme":"` + StampScheme + `","signature":"` + sigHex + `"}`), StampBadJSON},
		{"trailing data", b64(`{"publicKey":"` + fixturePubC + `","scheme":"` + StampScheme + `","signature":"` + sigHex + `"}x`), StampBadJSON},
		{"missing signature", b64(`{"publicKey":"` + fixturePubC + `","scheme":"` + StampScheme + `"}`), StampMissingField},
		{"missing publicKey", b64(`{"scheme":"` + StampScheme + `","signature":"` + sigHex + `"}`), StampMissingField},
		{"empty object", b64(`{}`), StampMissingField},
		{"unknown field", b64(`{"publicKey":"` + fixturePubC + `","scheme":"` + StampScheme + `","signature":"` + sigHex + `","timestamp":"1"}`), StampUnknownField},
		{"camelCase variant", b64(`{"public_key":"` + fixturePubC + `","scheme":"` + StampScheme + `","signature":"` + sigHex + `"}`), StampUnknownField},
		{"secp256k1 scheme", js(fixturePubC, "SIGNATURE_SCHEME_TK_API_SECP256K1", sigHex), StampBadScheme},
		{"lower-case scheme", js(fixturePubC, strings.ToLower(StampScheme), sigHex), StampBadScheme},
		{"empty scheme", js(fixturePubC, "", sigHex), StampBadScheme},
		{"key not hex", js("zz"+fixturePubC[2:], StampScheme, sigHex), StampBadPublicKey},
		{"key 64 hex", js(fixturePubC[2:], StampScheme, sigHex), StampBadPublicKey},
		{"key off curve", js("02"+strings.Repeat("0", 63)+"1", StampScheme, sigHex), StampBadPublicKey},
		{"key wrong prefix", js("04"+fixturePubC[2:], StampScheme, sigHex), StampBadPublicKey},
		{"signature not hex", js(fixturePubC, StampScheme, "zz"+sigHex[2:]), StampBadSignatureEncoding},
		{"signature odd hex", js(fixturePubC, StampScheme, sigHex[1:]), StampBadSignatureEncoding},
		{"signature raw r||s", js(fixturePubC, StampScheme, strings.Repeat("11", 64)), StampBadSignatureEncoding},
		{"signature long-form DER", js(fixturePubC, StampScheme, "308146"+sigHex[4:]), StampBadSignatureEncoding},
		{"signature non-minimal", js(fixturePubC, StampScheme, "3047022200"+sigHex[8:]), StampBadSignatureEncoding},
		{"signature trailing byte", js(fixturePubC, StampScheme, sigHex+"00"), StampBadSignatureEncoding},
		{"signature empty", js(fixturePubC, StampScheme, ""), StampBadSignatureEncoding},
	}
	seen := map[StampErrorReason]bool{}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			st, err := ParseStamp(tt.in)
			var se *StampError
			if st != nil || !errors.As(err, &se) {
				t.Fatalf("ParseStamp = %v, %v; want a *StampError", st, err)
			}
			if se.Reason != tt.reason {
				t.Fatalf("reason = %v (%v), want %v", se.Reason, err, tt.reason)
			}
			if !strings.HasPrefix(err.Error(), "walletcrypto: malformed stamp: "+tt.reason.String()) || strings.Count(err.Error(), "walletcrypto:") != 1 {
				t.Fatalf("message %q", err)
			}
			seen[se.Reason] = true
		})
	}
	for r := StampEmpty; r <= StampBadSignatureEncoding; r++ {
		if !seen[r] {
			t.Errorf("no case produces %v", r)
		}
	}
}

func TestStampErrorReasonString(t *testing.T) {
	names := map[string]bool{}
	for r := StampEmpty; r <= StampBadSignatureEncoding; r++ {
		s := r.String()
		if s == "" || strings.HasPrefix(s, "StampErrorReason(") || names[s] {
			t.Errorf("%d: %q", r, s)
		}
		names[s] = true
	}
	if got := StampErrorReason(0).String(); got != "StampErrorReason(0)" {
		t.Errorf("0: %q", got)
	}
	if got := StampErrorReason(99).String(); got != "StampErrorReason(99)" {
		t.Errorf("99: %q", got)
	}
	err := &StampError{Reason: StampBadPublicKey, Err: ErrInvalidPublicKey}
	if !errors.Is(err, ErrInvalidPublicKey) {
		t.Error("Unwrap")
	}
}

// TestStampEncodeFastPath: Encode's direct writing of the usual stamp gives
// the same bytes as the general JSON writer, and any scheme that JSON must
// escape still takes the general one.
func TestStampEncodeFastPath(t *testing.T) {
	var raw [65]byte
	raw[0] = 4
	for i := 1; i < 65; i++ {
		raw[i] = byte(i * 7)
	}
	for _, odd := range []byte{0, 1} {
		raw[64] = raw[64]&^1 | odd
		pub := &PublicKey{}
		copy(pub.raw[:], raw[:])
		for _, scheme := range []string{StampScheme, "", `quote"d`, `back\slash`, "tab\there", "é", "\x7f"} {
			for _, sig := range [][]byte{nil, {0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01}, make([]byte, 72)} {
				s := &Stamp{PublicKey: pub, Scheme: scheme, Signature: sig}
				want := base64.RawURLEncoding.EncodeToString(appendFlat(nil, flatObject{
					{"publicKey", pub.CompressedHex()},
					{"scheme", scheme},
					{"signature", hex.EncodeToString(sig)},
				}))
				if got := s.Encode(); got != want {
					t.Errorf("scheme %q, signature %x: Encode = %s, want %s", scheme, sig, got, want)
				}
			}
		}
	}
}
