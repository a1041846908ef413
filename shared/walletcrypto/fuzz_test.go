//go:build !js

package walletcrypto

import (
	"bytes"
	"crypto/elliptic"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
)

// Every parser has a fuzz target. Each asserts, beyond "no panic":
//   - a failed parse returns a nil or zero value;
//   - encode(parse(x)) parses to the same value and is a fixed point of
//     encode∘parse;
//   - x re-encodes to itself when it is in canonical form (always, for the
//     binary forms: SEC 1, base58check, DER);
//   - where an independent implementation exists (crypto/elliptic,
//     encoding/asn1, encoding/json, mr-tron/base58), it agrees.
// The seeds run as ordinary tests under `go test`.

// compactNoEscape reports whether a JSON text has no insignificant whitespace and
// no escape sequences: then our encoder must reproduce it exactly.
func compactNoEscape(b []byte) bool {
	var c bytes.Buffer
	return json.Compact(&c, b) == nil && bytes.Equal(c.Bytes(), b) && !bytes.ContainsRune(b, '\\')
}

func hasUpperHex(s string) bool { return strings.ContainsAny(s, "ABCDEF") }

func FuzzParsePublicKey(f *testing.F) {
	pub := mustPrivateKey(f, fixturePriv).PublicKey()
	offCurve := pub.Uncompressed()
	offCurve[64] ^= 1
	hybrid := append([]byte{6}, pub.Uncompressed()[1:]...)
	f.Add(pub.Compressed())                                  // fixture key, compressed
	f.Add(pub.Uncompressed())                                // fixture key, uncompressed
	f.Add(offCurve)                                          // uncompressed, off curve
	f.Add(append([]byte{2}, mustHex(f, hexP)...))            // x = p
	f.Add(append([]byte{3}, make([]byte, 32)...))            // x = 0, odd y
	f.Add(append([]byte{2}, append(make([]byte, 31), 1)...)) // x = 1: no point
	f.Add([]byte{0})                                         // identity
	f.Add(make([]byte, 65))                                  // all zero
	f.Add([]byte{})                                          // empty
	f.Add(hybrid)                                            // hybrid prefix 06
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePublicKey(data)

		// crypto/elliptic as the oracle.
		var oracle bool
		switch {
		case len(data) == 33 && (data[0] == 2 || data[0] == 3):
			x, _ := elliptic.UnmarshalCompressed(elliptic.P256(), data)
			oracle = x != nil
		case len(data) == 65 && data[0] == 4:
			//lint:ignore SA1019 independent test oracle
			x, _ := elliptic.Unmarshal(elliptic.P256(), data)
			oracle = x != nil
		}
		if oracle != (err == nil) {
			t.Fatalf("ParsePublicKey(%x): err = %v, crypto/elliptic ok = %v", data, err, oracle)
		}
		if err != nil {
			if p != nil {
				t.Fatal("non-nil key with an error")
			}
			return
		}
		enc := p.Uncompressed()
		if len(data) == 33 {
			enc = p.Compressed()
		}
		if !bytes.Equal(enc, data) {
			t.Fatalf("re-encodes to %x", enc)
		}
		for _, form := range [][]byte{p.Compressed(), p.Uncompressed()} {
			q, err := ParsePublicKey(form)
			if err != nil || !q.Equal(p) {
				t.Fatalf("%x does not parse back: %v", form, err)
			}
		}
	})
}

func FuzzParsePublicKeyHex(f *testing.F) {
	f.Add(fixturePubC)                     // fixture, compressed
	f.Add(strings.ToUpper(fixturePubC))    // upper case
	f.Add(fixturePubU(f))                  // uncompressed
	f.Add("04" + strings.Repeat("0", 128)) // zero point
	f.Add("02" + hexP)                     // x = p
	f.Add(fixturePubC[:65])                // odd length
	f.Add("0x" + fixturePubC[2:])          // 0x prefix
	f.Add(" " + fixturePubC[1:])           // leading space
	f.Add("")                              // empty
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePublicKeyHex(s)
		if err != nil {
			if p != nil {
				t.Fatal("non-nil key with an error")
			}
			return
		}
		enc := p.UncompressedHex()
		if len(s) == 66 {
			enc = p.CompressedHex()
		}
		if strings.ToLower(s) != enc {
			t.Fatalf("%q re-encodes to %q", s, enc)
		}
		if q, err := ParseClientPublicKey(s); err != nil || !q.Equal(p) {
			t.Fatalf("ParseClientPublicKey disagrees: %v", err)
		}
		if IsUncompressedHex(s) != (len(s) == 130) {
			t.Fatal("IsUncompressedHex disagrees")
		}
	})
}

func FuzzBase58CheckDecode(f *testing.F) {
	v := loadKAT(f)
	f.Add(v.CredentialBundle.Bundle)           // SDK credential bundle
	f.Add(v.FixedEphemeralHPKE.Bundle)         // fixed-ephemeral bundle
	f.Add(Base58CheckEncode(nil))              // empty payload
	f.Add(Base58CheckEncode([]byte{0, 0, 1}))  // leading zeros
	f.Add("1111")                              // four zero bytes, bad checksum
	f.Add("111")                               // shorter than a checksum
	f.Add("0OIl")                              // characters outside the alphabet
	f.Add(flipLast(v.CredentialBundle.Bundle)) // bad checksum
	f.Add("")                                  // empty
	f.Fuzz(func(t *testing.T, s string) {
		payload, err := Base58CheckDecode(s)
		if err != nil {
			if payload != nil {
				t.Fatal("non-nil payload with an error")
			}
			return
		}
		if got := Base58CheckEncode(payload); got != s {
			t.Fatalf("%q re-encodes to %q", s, got)
		}
		if got := testBase58CheckDecode(t, s); !bytes.Equal(got, payload) {
			t.Fatal("independent decoder disagrees")
		}
	})
}

func FuzzParseBundle(f *testing.F) {
	k := mustPrivateKey(f, fixturePriv)
	sealed, err := SealBundle(k.PublicKey(), []byte("seed"))
	if err != nil {
		f.Fatal(err)
	}
	u := k.PublicKey().UncompressedHex()
	ct := strings.Repeat("ab", 16)
	f.Add(sealed)                                                                      // canonical, from SealBundle
	f.Add(`{"ciphertext":"` + ct + `","encappedPublic":"` + u + `"}`)                  // reversed keys
	f.Add("{ \"encappedPublic\" : \"" + u + "\" , \"ciphertext\" : \"" + ct + "\" }")  // whitespace
	f.Add(`{"encappedPublic":"` + strings.ToUpper(u) + `","ciphertext":"` + ct + `"}`) // upper-case hex
	f.Add(`{"encappedPublic":"` + fixturePubC + `","ciphertext":"` + ct + `"}`)        // compressed enc
	f.Add(`{"encappedPublic":"` + u + `","ciphertext":"` + ct[:30] + `"}`)             // 15-byte ciphertext
	f.Add(`{"encappedPublic":"` + u + `","ciphertext":"` + ct + `","x":""}`)           // unknown key
	f.Add(`{"encappedPublic":"\u0030` + u[1:] + `","ciphertext":"` + ct + `"}`)        // escaped hex digit
	f.Add(`{}`)                                                                        // empty object
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBundle(s)
		if err != nil {
			if b.EncappedPublic != nil || b.Ciphertext != nil {
				t.Fatal("non-zero Bundle with an error")
			}
			return
		}
		enc := b.Encode()
		b2, err := ParseBundle(enc)
		if err != nil || !reflect.DeepEqual(b, b2) || b2.Encode() != enc {
			t.Fatalf("Encode() = %s does not round-trip: %v", enc, err)
		}
		if compactNoEscape([]byte(s)) && !hasUpperHex(s) && strings.HasPrefix(s, `{"encappedPublic":`) && s != enc {
			t.Fatalf("canonical %s re-encodes to %s", s, enc)
		}
	})
}

func FuzzParseTargetBundle(f *testing.F) {
	signer := mustPrivateKey(f, fixturePriv)
	target := mustPrivateKey(f, loadKAT(f).CredentialBundle.ReceiverPrivate).PublicKey()
	tb, err := NewTargetBundle(signer, target)
	if err != nil {
		f.Fatal(err)
	}
	b, _ := ParseTargetBundle(tb)
	extra := []byte(`{"organizationId":"o", "targetPublic":"` + target.UncompressedHex() + `"}`)
	f.Add(tb)                                                                                      // canonical, from NewTargetBundle
	f.Add(envelope("v1.0.0", extra, b.DataSignature, signer.PublicKey().UncompressedHex()))        // extra data keys, spaced data
	f.Add(strings.ToUpper(tb))                                                                     // all upper case: bad keys
	f.Add(strings.Replace(tb, "v1.0.0", "v2.0.0", 1))                                              // wrong version
	f.Add(strings.Replace(tb, `{"version":"v1.0.0",`, `{`, 1))                                     // no version
	f.Add(strings.Replace(tb, `","`, `", "`, -1))                                                  // whitespace
	f.Add(envelope("v1.0.0", []byte(`{}`), b.DataSignature, signer.PublicKey().UncompressedHex())) // no targetPublic
	f.Add(`{"version":"v1.0.0"}`)                                                                  // missing keys
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseTargetBundle(s)
		if err != nil {
			if b != nil {
				t.Fatal("non-nil bundle with an error")
			}
			return
		}
		enc := b.Encode()
		b2, err := ParseTargetBundle(enc)
		if err != nil || b2.Encode() != enc || b2.Version != b.Version || !bytes.Equal(b2.Data, b.Data) ||
			!bytes.Equal(b2.DataSignature, b.DataSignature) || !b2.EnclaveQuorumPublic.Equal(b.EnclaveQuorumPublic) ||
			!b2.TargetPublic.Equal(b.TargetPublic) {
			t.Fatalf("Encode() = %s does not round-trip: %v", enc, err)
		}
		ordered := strings.HasPrefix(s, `{"version":`) && strings.Index(s, `"data":`) < strings.Index(s, `"dataSignature":`) &&
			strings.Index(s, `"dataSignature":`) < strings.Index(s, `"enclaveQuorumPublic":`)
		if compactNoEscape([]byte(s)) && !hasUpperHex(s) && ordered && s != enc {
			t.Fatalf("canonical %s re-encodes to %s", s, enc)
		}
	})
}

func FuzzParseOTPPlaintext(f *testing.F) {
	u := fixturePubU(f)
	f.Add(OTPPlaintext("123456", u))                                                  // canonical, uncompressed key
	f.Add(OTPPlaintext("123456", fixturePubC))                                        // canonical, compressed key
	f.Add([]byte(`{"public_key":"` + u + `","otp_code":"1"}`))                        // other order
	f.Add([]byte(`{"otp_code":"a \"b\" \u00e9","public_key":"` + fixturePubC + `"}`)) // escapes in the code
	f.Add([]byte(`{"otp_code":"1 2","public_key":"` + fixturePubC + `"}`))            // space inside the code
	f.Add([]byte(`{"otp_code":"1","public_key":"` + u + `","x":"y"}`))                // unknown key
	f.Add([]byte(`{"otp_code":"","public_key":"` + u + `"}`))                         // empty code
	f.Add([]byte(`{"otp_code":1,"public_key":"` + u + `"}`))                          // numeric code
	f.Fuzz(func(t *testing.T, b []byte) {
		code, pub, err := ParseOTPPlaintext(b)
		if err != nil {
			if code != "" || pub != nil {
				t.Fatal("non-zero result with an error")
			}
			return
		}
		forms := []func(*PublicKey) string{(*PublicKey).CompressedHex, (*PublicKey).UncompressedHex}
		for _, form := range forms {
			enc := OTPPlaintext(code, form(pub))
			c2, p2, err := ParseOTPPlaintext(enc)
			if err != nil || c2 != code || !p2.Equal(pub) || !bytes.Equal(OTPPlaintext(c2, form(p2)), enc) {
				t.Fatalf("%s does not round-trip: %v", enc, err)
			}
		}
		encC, encU := OTPPlaintext(code, pub.CompressedHex()), OTPPlaintext(code, pub.UncompressedHex())
		if compactNoEscape(b) && bytes.HasPrefix(b, []byte(`{"otp_code":`)) && !hasUpperHex(string(b[bytes.LastIndex(b, []byte(`"public_key"`)):])) &&
			!bytes.Equal(b, encC) && !bytes.Equal(b, encU) {
			t.Fatalf("canonical %s re-encodes to %s or %s", b, encC, encU)
		}
	})
}

func FuzzParseStamp(f *testing.F) {
	k := mustPrivateKey(f, fixturePriv)
	signed, err := SignStamp(k, []byte("payload"))
	if err != nil {
		f.Fatal(err)
	}
	js := func(pub, scheme, sig string) string {
		return b64(`{"publicKey":"` + pub + `","scheme":"` + scheme + `","signature":"` + sig + `"}`)
	}
	f.Add(signed)                                                                                                                   // canonical, from SignStamp
	f.Add(js(fixturePubC, StampScheme, katDER))                                                                                     // the KAT signature (high S)
	f.Add(b64(`{"publicKey":"` + fixturePubC + `","signature":"` + katDER + `","scheme":"` + StampScheme + `"}`))                   // Go SDK order
	f.Add(js(fixturePubU(f), StampScheme, katDER))                                                                                  // uncompressed key
	f.Add(js(strings.ToUpper(fixturePubC), StampScheme, katDER))                                                                    // upper-case hex
	f.Add(b64("{ \"publicKey\" : \"" + fixturePubC + "\", \"scheme\":\"" + StampScheme + "\", \"signature\":\"" + katDER + "\" }")) // whitespace
	f.Add(js(fixturePubC, "SIGNATURE_SCHEME_TK_API_ED25519", katDER))                                                               // other scheme
	f.Add(js(fixturePubC, StampScheme, "308146"+katDER[4:]))                                                                        // long-form DER
	f.Add(signed + "=")                                                                                                             // padding
	f.Add(b64(`{}`))                                                                                                                // missing fields
	f.Add("")                                                                                                                       // empty
	f.Fuzz(func(t *testing.T, h string) {
		st, err := ParseStamp(h)
		if err != nil {
			var se *StampError
			if st != nil || !errors.As(err, &se) || se.Reason < StampEmpty || se.Reason > StampBadSignatureEncoding {
				t.Fatalf("ParseStamp = %v, %v", st, err)
			}
			return
		}
		enc := st.Encode()
		st2, err := ParseStamp(enc)
		if err != nil || st2.Encode() != enc || !st2.PublicKey.Equal(st.PublicKey) || st2.Scheme != st.Scheme || !bytes.Equal(st2.Signature, st.Signature) {
			t.Fatalf("Encode() = %s does not round-trip: %v", enc, err)
		}
		raw, _ := base64.RawURLEncoding.DecodeString(h)
		s := string(raw)
		canonical := compactNoEscape(raw) && !hasUpperHex(strings.Replace(s, StampScheme, "", 1)) &&
			strings.Index(s, `","scheme":"`) == len(`{"publicKey":"`)+66 && strings.Index(s, `"scheme"`) < strings.Index(s, `"signature"`)
		if canonical && h != enc {
			t.Fatalf("canonical %s (%s) re-encodes to %s", h, raw, enc)
		}
	})
}

func FuzzParseDERSignature(f *testing.F) {
	f.Add(mustHex(f, katDER))                  // KAT: both integers need a leading zero
	f.Add(mustHex(f, "3006020101020101"))      // r = s = 1
	f.Add(mustHex(f, "3026020101022100"+hexN)) // s = n
	f.Add(mustHex(f, "300702020001020101"))    // non-minimal
	f.Add(mustHex(f, "3006020181020101"))      // negative
	f.Add(mustHex(f, "308106020101020101"))    // long-form length
	f.Add(mustHex(f, "300602010102010100"))    // trailing byte
	f.Add([]byte{})                            // empty
	f.Fuzz(func(t *testing.T, der []byte) {
		r, s, err := ParseDERSignature(der)
		var oracle struct{ R, S *big.Int }
		rest, aerr := asn1.Unmarshal(der, &oracle)
		if err != nil {
			if r != nil || s != nil {
				t.Fatal("non-nil integers with an error")
			}
			return
		}
		if aerr != nil || len(rest) != 0 || oracle.R.Cmp(r) != 0 || oracle.S.Cmp(s) != 0 {
			t.Fatalf("encoding/asn1 disagrees: %v", aerr)
		}
		again, err := EncodeDERSignature(r, s)
		if err != nil || !bytes.Equal(again, der) {
			t.Fatalf("%x re-encodes to %x (%v)", der, again, err)
		}
		if m, _ := asn1.Marshal(oracle); !bytes.Equal(m, der) {
			t.Fatalf("encoding/asn1 re-encodes to %x", m)
		}
	})
}

func FuzzFlatJSON(f *testing.F) {
	f.Add([]byte(`{}`))                                                     // empty object
	f.Add([]byte(`{"a":"b","c":"d"}`))                                      // canonical
	f.Add([]byte(" { \"a\" : \"b\" } "))                                    // whitespace
	f.Add([]byte(`{"k":"\"\\\/\b\f\n\r\t\u0000\u001f\u00e9\ud83d\ude00"}`)) // every escape
	f.Add([]byte("{\"k\":\"é😀\u2028\x7f\"}"))                               // raw non-ASCII and DEL
	f.Add([]byte(`{"a":"b","a":"c"}`))                                      // duplicate
	f.Add([]byte(`{"a":"\ud83d"}`))                                         // lone surrogate
	f.Add([]byte("{\"a\":\"\xff\"}"))                                       // invalid UTF-8
	f.Add([]byte(`{"a":1}`))                                                // non-string value
	f.Add([]byte(`{"a":"b"}x`))                                             // trailing data
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := parseFlat(b)
		if err != nil {
			if o != nil {
				t.Fatal("non-nil object with an error")
			}
			return
		}
		enc := appendFlat(nil, o)
		o2, err := parseFlat(enc)
		if err != nil || !reflect.DeepEqual(o, o2) || !bytes.Equal(appendFlat(nil, o2), enc) {
			t.Fatalf("%s does not round-trip: %v", enc, err)
		}
		if compactNoEscape(b) && !bytes.Equal(b, enc) {
			t.Fatalf("canonical %s re-encodes to %s", b, enc)
		}
		// encoding/json accepts whatever we accept, with the same values.
		var m map[string]string
		if err := json.Unmarshal(b, &m); err != nil || len(m) != len(o) {
			t.Fatalf("encoding/json: %v, %v", m, err)
		}
		for _, fl := range o {
			if v, ok := m[fl.key]; !ok || v != fl.value {
				t.Fatalf("encoding/json: %q = %q, we say %q", fl.key, v, fl.value)
			}
		}
	})
}
