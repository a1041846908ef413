//go:build !js

package walletcrypto

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

const (
	testMnemonic = "legal winner thank year wave sausage worth useful legal winner thank yellow"
	testOrgID    = "Customer:019542f5-b3e7-7d02-8000-000000000001"
)

// exportData builds export-bundle data from its parts, as a test oracle.
func exportData(enc, ct []byte, org string) []byte {
	return []byte(`{"encappedPublic":"` + hex.EncodeToString(enc) + `","ciphertext":"` +
		hex.EncodeToString(ct) + `","organizationId":"` + org + `"}`)
}

func TestExportBundleRoundTrip(t *testing.T) {
	signer := mustGenerateKey(t)
	recipient := mustGenerateKey(t)
	s, err := NewExportBundle(signer, recipient.PublicKey(), testOrgID, []byte(testMnemonic))
	if err != nil {
		t.Fatal(err)
	}
	env, err := parseEnvelope(s, "export bundle")
	if err != nil {
		t.Fatal(err)
	}
	// Layout: the envelope and the data exactly as documented.
	b, err := ParseBundle(string(env.Data[:bytes.Index(env.Data, []byte(`,"organizationId"`))]) + "}")
	if err != nil {
		t.Fatalf("data does not start with the JSON HPKE form: %s (%v)", env.Data, err)
	}
	if want := exportData(b.EncappedPublic, b.Ciphertext, testOrgID); !bytes.Equal(env.Data, want) {
		t.Fatalf("data = %s\nwant %s", env.Data, want)
	}
	if want := envelope("v1.0.0", env.Data, env.DataSignature, signer.PublicKey().UncompressedHex()); s != want {
		t.Fatalf("bundle = %s\nwant %s", s, want)
	}
	if len(b.Ciphertext) != len(testMnemonic)+16 {
		t.Fatalf("ciphertext is %d bytes", len(b.Ciphertext))
	}

	// The pinned key may come in either encoding.
	compressed, _ := ParsePublicKey(signer.PublicKey().Compressed())
	for _, pinned := range []*PublicKey{signer.PublicKey(), compressed} {
		org, pt, err := OpenExportBundle(s, pinned, recipient)
		if err != nil || org != testOrgID || string(pt) != testMnemonic {
			t.Fatalf("OpenExportBundle = %q, %q, %v", org, pt, err)
		}
	}

	// Two bundles of the same secret share nothing but the layout.
	s2, _ := NewExportBundle(signer, recipient.PublicKey(), testOrgID, []byte(testMnemonic))
	if s2 == s {
		t.Fatal("two bundles are equal")
	}
}

func TestNewExportBundleErrors(t *testing.T) {
	k := mustGenerateKey(t)
	wiped := mustGenerateKey(t)
	wiped.Wipe()
	if _, err := NewExportBundle(nil, k.PublicKey(), "o", nil); !isErr(err, ErrInvalidPrivateKey) {
		t.Errorf("nil signer: %v", err)
	}
	if _, err := NewExportBundle(wiped, k.PublicKey(), "o", nil); !isErr(err, ErrInvalidPrivateKey) {
		t.Errorf("wiped signer: %v", err)
	}
	if _, err := NewExportBundle(k, nil, "o", nil); !isErr(err, ErrInvalidPublicKey) {
		t.Errorf("nil recipient: %v", err)
	}
	// Characters JSON must escape survive the trip.
	s, err := NewExportBundle(k, k.PublicKey(), "a\"b\\c\n\u00e9", []byte{})
	if err != nil {
		t.Fatal(err)
	}
	if org, pt, err := OpenExportBundle(s, k.PublicKey(), k); err != nil || org != "a\"b\\c\n\u00e9" || len(pt) != 0 {
		t.Fatalf("OpenExportBundle = %q, %q, %v", org, pt, err)
	}
}

func TestOpenExportBundle(t *testing.T) {
	signer := mustGenerateKey(t)
	recipient := mustGenerateKey(t)
	other := mustGenerateKey(t)
	signerHex := signer.PublicKey().UncompressedHex()
	prod := loadKAT(t).PinnedKeys["signer"]

	enc, ct, err := Seal(recipient.PublicKey(), []byte(testMnemonic))
	if err != nil {
		t.Fatal(err)
	}
	data := exportData(enc, ct, testOrgID)
	sig := signDER(t, signer, data)
	valid := envelope("v1.0.0", data, sig, signerHex)
	// signed returns the envelope of data, correctly signed.
	signed := func(data []byte) string { return envelope("v1.0.0", data, signDER(t, signer, data), signerHex) }

	tamperedCT := bytes.Clone(ct)
	tamperedCT[0] ^= 1
	toOther, _, _ := Seal(other.PublicKey(), []byte(testMnemonic))
	upperData := []byte(`{"encappedPublic":"04` + strings.ToUpper(hex.EncodeToString(enc[1:])) + `","ciphertext":"` +
		strings.ToUpper(hex.EncodeToString(ct)) + `","organizationId":"` + testOrgID + `"}`)
	spaced := []byte(`{ "organizationId" : "` + testOrgID + `", "ciphertext":"` + hex.EncodeToString(ct) +
		`",` + "\n" + `"encappedPublic":"` + hex.EncodeToString(enc) + `" }`)

	tests := []struct {
		name      string
		in        string
		recipient *PrivateKey
		want      error // nil: opens to testMnemonic
	}{
		{"valid", valid, recipient, nil},
		{"upper-case hex in data and signer", envelope("v1.0.0", upperData, signDER(t, signer, upperData), "04"+strings.ToUpper(signerHex[2:])), recipient, nil},
		{"other key order and whitespace in data", signed(spaced), recipient, nil},
		{"high-S signature", envelope("v1.0.0", data, highS(t, sig), signerHex), recipient, nil},

		{"wrong signer", envelope("v1.0.0", data, signDER(t, other, data), other.PublicKey().UncompressedHex()), recipient, ErrSignerMismatch},
		{"production signer is not ours", envelope("v1.0.0", data, sig, prod), recipient, ErrSignerMismatch},
		{"signature by another key", envelope("v1.0.0", data, signDER(t, other, data), signerHex), recipient, ErrInvalidSignature},
		{"tampered data", envelope("v1.0.0", exportData(enc, ct, "Customer:other"), sig, signerHex), recipient, ErrInvalidSignature},
		{"tampered ciphertext", envelope("v1.0.0", exportData(enc, tamperedCT, testOrgID), sig, signerHex), recipient, ErrInvalidSignature},
		{"signature over the hex, not the bytes", envelope("v1.0.0", data, signDER(t, signer, []byte(hex.EncodeToString(data))), signerHex), recipient, ErrInvalidSignature},

		{"wrong recipient", valid, other, ErrDecrypt},
		{"sealed to another key", signed(exportData(toOther, ct, testOrgID)), recipient, ErrDecrypt},
		{"tampered ciphertext, re-signed", signed(exportData(enc, tamperedCT, testOrgID)), recipient, ErrDecrypt},
		{"wiped recipient", valid, wipedKey(t), ErrInvalidPrivateKey},
		{"nil recipient", valid, nil, ErrInvalidPrivateKey},

		{"sandbox form: empty signature and signer", envelope("v1.0.0", data, nil, ""), recipient, ErrMalformed},
		{"empty signature", envelope("v1.0.0", data, nil, signerHex), recipient, ErrMalformed},
		{"bad DER", envelope("v1.0.0", data, append(bytes.Clone(sig), 0), signerHex), recipient, ErrMalformed},
		{"wrong version", envelope("v1.0.1", data, sig, signerHex), recipient, ErrMalformed},
		{"compressed signer", envelope("v1.0.0", data, sig, signer.PublicKey().CompressedHex()), recipient, ErrMalformed},
		{"signer off curve", envelope("v1.0.0", data, sig, offCurveHex(signerHex)), recipient, ErrMalformed},
		{"unknown envelope key", strings.Replace(valid, `{`, `{"x":"y",`, 1), recipient, ErrMalformed},
		{"missing version", strings.Replace(valid, `"version":"v1.0.0",`, ``, 1), recipient, ErrMalformed},
		{"data not hex", strings.Replace(valid, `"data":"7b`, `"data":"zz`, 1), recipient, ErrMalformed},
		{"not JSON", "v1.0.0", recipient, ErrMalformed},

		// Bad data, correctly signed: refused after the signature check.
		{"target-bundle data", signed([]byte(`{"targetPublic":"` + recipient.PublicKey().UncompressedHex() + `"}`)), recipient, ErrMalformed},
		{"missing organizationId", signed(data[:bytes.Index(data, []byte(`,"organizationId"`))]), recipient, ErrMalformed},
		{"extra data key", signed(append(data[:len(data)-1:len(data)-1], `,"userId":"u"}`...)), recipient, ErrMalformed},
		{"compressed encappedPublic", signed(exportData(testCompress(t, enc), ct, testOrgID)), recipient, ErrMalformed},
		{"encappedPublic off curve", signed([]byte(strings.Replace(string(data), hex.EncodeToString(enc), offCurveHex(hex.EncodeToString(enc)), 1))), recipient, ErrMalformed},
		{"ciphertext shorter than the tag", signed(exportData(enc, ct[:15], testOrgID)), recipient, ErrMalformed},
		{"ciphertext not hex", signed([]byte(strings.Replace(string(data), `"ciphertext":"`, `"ciphertext":"x`, 1))), recipient, ErrMalformed},
		{"data with a number", signed([]byte(`{"encappedPublic":"` + hex.EncodeToString(enc) + `","ciphertext":"` + hex.EncodeToString(ct) + `","organizationId":1}`)), recipient, ErrMalformed},
		{"data not JSON", signed([]byte(testMnemonic)), recipient, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			org, pt, err := OpenExportBundle(tt.in, signer.PublicKey(), tt.recipient)
			if tt.want == nil {
				if err != nil || org != testOrgID || string(pt) != testMnemonic {
					t.Fatalf("OpenExportBundle = %q, %q, %v", org, pt, err)
				}
				return
			}
			if org != "" || pt != nil || !isErr(err, tt.want) {
				t.Fatalf("OpenExportBundle = %q, %q, %v; want %v", org, pt, err, tt.want)
			}
		})
	}
	if _, _, err := OpenExportBundle(valid, nil, recipient); !isErr(err, ErrSignerMismatch) {
		t.Fatalf("nil pinned signer: %v", err)
	}
	// An export bundle is not a target bundle, and the other way round.
	if _, err := VerifyTargetBundle(valid, signer.PublicKey()); !isErr(err, ErrMalformed) {
		t.Fatalf("VerifyTargetBundle(export bundle) = %v", err)
	}
	tb, _ := NewTargetBundle(signer, recipient.PublicKey())
	if _, _, err := OpenExportBundle(tb, signer.PublicKey(), recipient); !isErr(err, ErrMalformed) {
		t.Fatalf("OpenExportBundle(target bundle) = %v", err)
	}
}

// TestExportBundleKAT opens a bundle made with Turnkey's published JavaScript
// (testdata/exportbundle.json), and checks that ours has its exact layout.
// The other direction, Turnkey's decryptExportBundle opening a bundle from
// NewExportBundle, was checked once by hand with the same packages.
func TestExportBundleKAT(t *testing.T) {
	b, err := os.ReadFile("testdata/exportbundle.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Source          string `json:"_source"`
		SignerPrivate   string `json:"signerPrivate"`
		SignerPublic    string `json:"signerPublic"`
		ReceiverPrivate string `json:"receiverPrivate"`
		OrganizationID  string `json:"organizationId"`
		Plaintext       string `json:"plaintext"`
		Bundle          string `json:"bundle"`
	}
	strictDecode(t, b, &v)
	signer := mustPrivateKey(t, v.SignerPrivate)
	if signer.PublicKey().UncompressedHex() != v.SignerPublic {
		t.Fatal("signerPublic is not the signer's")
	}
	recipient := mustPrivateKey(t, v.ReceiverPrivate)
	org, pt, err := OpenExportBundle(v.Bundle, signer.PublicKey(), recipient)
	if err != nil || org != v.OrganizationID || string(pt) != v.Plaintext {
		t.Fatalf("OpenExportBundle = %q, %q, %v", org, pt, err)
	}
	env, err := parseEnvelope(v.Bundle, "export bundle")
	if err != nil {
		t.Fatal(err)
	}
	if env.Encode() != v.Bundle {
		t.Fatalf("our envelope layout differs:\n%s\n%s", env.Encode(), v.Bundle)
	}
	_, d, err := parseExportData(env.Data)
	if err != nil {
		t.Fatal(err)
	}
	if got := exportData(d.EncappedPublic, d.Ciphertext, org); !bytes.Equal(got, env.Data) {
		t.Fatalf("our data layout differs:\n%s\n%s", got, env.Data)
	}
	// The vector is pinned to its signer, not to Turnkey's production key.
	prod, _ := ParsePublicKeyHex(loadKAT(t).PinnedKeys["signer"])
	if _, _, err := OpenExportBundle(v.Bundle, prod, recipient); !isErr(err, ErrSignerMismatch) {
		t.Fatalf("production signer: %v", err)
	}
}

func wipedKey(t testing.TB) *PrivateKey {
	k := mustGenerateKey(t)
	k.Wipe()
	return k
}

// jsonEnvelope and jsonExportData are the export bundle as encoding/json sees
// it; field order is the documented key order.
type jsonEnvelope struct {
	Version             string `json:"version"`
	Data                string `json:"data"`
	DataSignature       string `json:"dataSignature"`
	EnclaveQuorumPublic string `json:"enclaveQuorumPublic"`
}

type jsonExportData struct {
	EncappedPublic string `json:"encappedPublic"`
	Ciphertext     string `json:"ciphertext"`
	OrganizationID string `json:"organizationId"`
}

// strictDecode decodes JSON into v, refusing unknown fields.
func strictDecode(t testing.TB, b []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
}

// TestInteropExportBundle builds and reads export bundles with independent
// parts: circl's HPKE, encoding/json, and ecdsa directly.
func TestInteropExportBundle(t *testing.T) {
	signer := mustGenerateKey(t)
	recipient := mustGenerateKey(t)
	for name, pt := range map[string][]byte{
		"mnemonic":   []byte(testMnemonic),
		"24 words":   []byte(strings.Repeat("abandon ", 23) + "art"),
		"empty":      {},
		"multiblock": bytes.Repeat([]byte("0123456789abcdef"), 70),
	} {
		t.Run("circl→ours/"+name, func(t *testing.T) {
			enc, ct := circlSeal(t, recipient.PublicKey(), pt, rand.Reader)
			data, err := json.Marshal(jsonExportData{hex.EncodeToString(enc), hex.EncodeToString(ct), testOrgID})
			if err != nil {
				t.Fatal(err)
			}
			s, err := json.Marshal(jsonEnvelope{"v1.0.0", hex.EncodeToString(data),
				hex.EncodeToString(signDER(t, signer, data)), signer.PublicKey().UncompressedHex()})
			if err != nil {
				t.Fatal(err)
			}
			org, got, err := OpenExportBundle(string(s), signer.PublicKey(), recipient)
			if err != nil || org != testOrgID || !bytes.Equal(got, pt) {
				t.Fatalf("OpenExportBundle = %q, %q, %v", org, got, err)
			}
		})
		t.Run("ours→circl/"+name, func(t *testing.T) {
			s, err := NewExportBundle(signer, recipient.PublicKey(), testOrgID, pt)
			if err != nil {
				t.Fatal(err)
			}
			var env jsonEnvelope
			strictDecode(t, []byte(s), &env)
			if again, _ := json.Marshal(env); string(again) != s {
				t.Fatalf("bundle is not what encoding/json writes:\n%s\n%s", s, again)
			}
			data := mustHex(t, env.Data)
			var d jsonExportData
			strictDecode(t, data, &d)
			if again, _ := json.Marshal(d); !bytes.Equal(again, data) {
				t.Fatalf("data is not what encoding/json writes:\n%s\n%s", data, again)
			}
			digest := sha256.Sum256(data)
			if env.Version != "v1.0.0" || env.EnclaveQuorumPublic != signer.PublicKey().UncompressedHex() ||
				!ecdsa.VerifyASN1(signer.PublicKey().ecdsa, digest[:], mustHex(t, env.DataSignature)) {
				t.Fatal("envelope does not verify independently")
			}
			if d.OrganizationID != testOrgID {
				t.Fatalf("organizationId %q", d.OrganizationID)
			}
			if got := circlOpen(t, recipient, mustHex(t, d.EncappedPublic), mustHex(t, d.Ciphertext)); !bytes.Equal(got, pt) {
				t.Fatalf("circl opened %q", got)
			}
		})
	}
}

func FuzzOpenExportBundle(f *testing.F) {
	signer := mustPrivateKey(f, fixturePriv)
	recipient := mustPrivateKey(f, loadKAT(f).CredentialBundle.ReceiverPrivate)
	s, err := NewExportBundle(signer, recipient.PublicKey(), testOrgID, []byte(testMnemonic))
	if err != nil {
		f.Fatal(err)
	}
	tb, _ := NewTargetBundle(signer, recipient.PublicKey())
	// testdata/exportbundle.json uses the same two keys.
	var kat struct{ Bundle, OrganizationID, Plaintext string }
	if b, err := os.ReadFile("testdata/exportbundle.json"); err != nil || json.Unmarshal(b, &kat) != nil {
		f.Fatal("testdata/exportbundle.json")
	}
	f.Add(kat.Bundle)                                                                   // from Turnkey's JavaScript, opens
	f.Add(s)                                                                            // canonical, opens
	f.Add(strings.Replace(s, `","`, `", "`, -1))                                        // whitespace: still opens
	f.Add(strings.Replace(s, "v1.0.0", "v2.0.0", 1))                                    // wrong version
	f.Add(strings.Replace(s, `"data":"7b22`, `"data":"7b20`, 1))                        // tampered data
	f.Add(tb)                                                                           // a target bundle
	f.Add(`{"version":"v1.0.0","data":"","dataSignature":"","enclaveQuorumPublic":""}`) // sandbox-like
	f.Add(`{}`)
	f.Fuzz(func(t *testing.T, s string) {
		org, pt, err := OpenExportBundle(s, signer.PublicKey(), recipient)
		if err != nil {
			if org != "" || pt != nil {
				t.Fatalf("results %q, %q with error %v", org, pt, err)
			}
		} else if (org != testOrgID || string(pt) != testMnemonic) && (org != kat.OrganizationID || string(pt) != kat.Plaintext) {
			// Only the fixture's signer can sign, and it signed two bundles.
			t.Fatalf("opened to %q, %q", org, pt)
		}
		env, err := parseEnvelope(s, "export bundle")
		if err != nil {
			if env != nil {
				t.Fatal("non-nil envelope with an error")
			}
			return
		}
		enc := env.Encode()
		env2, err := parseEnvelope(enc, "export bundle")
		if err != nil || env2.Encode() != enc || !bytes.Equal(env2.Data, env.Data) ||
			!bytes.Equal(env2.DataSignature, env.DataSignature) || !env2.EnclaveQuorumPublic.Equal(env.EnclaveQuorumPublic) {
			t.Fatalf("Encode() = %s does not round-trip: %v", enc, err)
		}
		ordered := strings.HasPrefix(s, `{"version":`) && strings.Index(s, `"data":`) < strings.Index(s, `"dataSignature":`) &&
			strings.Index(s, `"dataSignature":`) < strings.Index(s, `"enclaveQuorumPublic":`)
		if compactNoEscape([]byte(s)) && !hasUpperHex(s) && ordered && enc != s {
			t.Fatalf("canonical %s re-encodes to %s", s, enc)
		}
	})
}

// FuzzParseExportData covers the data parser, which OpenExportBundle reaches
// only for signed data.
func FuzzParseExportData(f *testing.F) {
	k := mustPrivateKey(f, fixturePriv)
	enc, ct, err := Seal(k.PublicKey(), []byte(testMnemonic))
	if err != nil {
		f.Fatal(err)
	}
	data := exportData(enc, ct, testOrgID)
	f.Add(data)
	f.Add(exportData(enc, ct, ""))
	f.Add(exportData(enc, ct[:15], testOrgID))
	f.Add([]byte(`{"encappedPublic":"04","ciphertext":"","organizationId":""}`))
	f.Add([]byte(`{"targetPublic":"` + k.PublicKey().UncompressedHex() + `"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		org, b, err := parseExportData(data)
		if err != nil {
			if org != "" || b.EncappedPublic != nil || b.Ciphertext != nil {
				t.Fatal("non-empty results with an error")
			}
			return
		}
		if len(b.EncappedPublic) != 65 || len(b.Ciphertext) < 16 {
			t.Fatalf("parsed %d-byte enc, %d-byte ciphertext", len(b.EncappedPublic), len(b.Ciphertext))
		}
		canonical := appendFlat(nil, flatObject{
			{"encappedPublic", hex.EncodeToString(b.EncappedPublic)},
			{"ciphertext", hex.EncodeToString(b.Ciphertext)},
			{"organizationId", org},
		})
		org2, b2, err := parseExportData(canonical)
		if err != nil || org2 != org || !bytes.Equal(b2.EncappedPublic, b.EncappedPublic) || !bytes.Equal(b2.Ciphertext, b.Ciphertext) {
			t.Fatalf("%s does not round-trip: %v", canonical, err)
		}
	})
}
