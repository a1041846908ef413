//go:build !js

package walletcrypto

import (
	"encoding/hex"
	"strings"
	"testing"
)

// envelope builds a target bundle JSON from its parts, as a test oracle.
func envelope(version string, data, sig []byte, signerHex string) string {
	return `{"version":"` + version + `","data":"` + hex.EncodeToString(data) +
		`","dataSignature":"` + hex.EncodeToString(sig) + `","enclaveQuorumPublic":"` + signerHex + `"}`
}

func TestTargetBundleRoundTrip(t *testing.T) {
	signer := mustGenerateKey(t)
	target := mustGenerateKey(t).PublicKey()
	s, err := NewTargetBundle(signer, target)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseTargetBundle(s)
	if err != nil {
		t.Fatal(err)
	}
	if b.Encode() != s {
		t.Fatalf("Encode() = %s\nwant %s", b.Encode(), s)
	}
	if string(b.Data) != `{"targetPublic":"`+target.UncompressedHex()+`"}` {
		t.Fatalf("data = %s", b.Data)
	}
	if s != envelope(TargetBundleVersion, b.Data, b.DataSignature, signer.PublicKey().UncompressedHex()) {
		t.Fatalf("layout: %s", s)
	}
	got, err := VerifyTargetBundle(s, signer.PublicKey())
	if err != nil || !got.Equal(target) {
		t.Fatalf("VerifyTargetBundle = %v, %v", got, err)
	}
	// The pinned key may have been parsed from the compressed form.
	pinned, _ := ParsePublicKey(signer.PublicKey().Compressed())
	if _, err := VerifyTargetBundle(s, pinned); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyTargetBundle(t *testing.T) {
	signer := mustGenerateKey(t)
	other := mustGenerateKey(t)
	target := mustGenerateKey(t).PublicKey()
	signerHex := signer.PublicKey().UncompressedHex()
	data := []byte(`{"targetPublic":"` + target.UncompressedHex() + `"}`)
	sig := signDER(t, signer, data)
	tls := loadKAT(t).PinnedKeys["tlsFetcherSign"]

	withExtra := []byte(`{"organizationId":"org","targetPublic":"` + target.UncompressedHex() + `", "userId":"u"}`)
	otherTarget := []byte(`{"targetPublic":"` + other.PublicKey().UncompressedHex() + `"}`)
	noTarget := []byte(`{"organizationId":"org"}`)
	badDER := append(append([]byte{}, sig...), 0)

	tests := []struct {
		name string
		in   string
		want error // nil: verifies and returns target
	}{
		{"valid", envelope("v1.0.0", data, sig, signerHex), nil},
		{"upper-case signer hex", envelope("v1.0.0", data, sig, "04"+strings.ToUpper(signerHex[2:])), nil},
		{"extra data keys ignored", envelope("v1.0.0", withExtra, signDER(t, signer, withExtra), signerHex), nil},
		{"high-S signature", envelope("v1.0.0", data, highS(t, sig), signerHex), nil},
		{"tampered data", envelope("v1.0.0", otherTarget, sig, signerHex), ErrInvalidSignature},
		{"signature by another key", envelope("v1.0.0", data, signDER(t, other, data), signerHex), ErrInvalidSignature},
		{"signature over the hex, not the bytes", envelope("v1.0.0", data, signDER(t, signer, []byte(hex.EncodeToString(data))), signerHex), ErrInvalidSignature},
		{"wrong signer", envelope("v1.0.0", data, signDER(t, other, data), other.PublicKey().UncompressedHex()), ErrSignerMismatch},
		{"production TLS fetcher key is not ours", envelope("v1.0.0", data, sig, tls), ErrSignerMismatch},
		{"bad DER", envelope("v1.0.0", data, badDER, signerHex), ErrMalformed},
		{"empty signature", envelope("v1.0.0", data, nil, signerHex), ErrMalformed},
		{"wrong version", envelope("v1.0.1", data, sig, signerHex), ErrMalformed},
		{"empty version", envelope("", data, sig, signerHex), ErrMalformed},
		{"missing targetPublic", envelope("v1.0.0", noTarget, signDER(t, signer, noTarget), signerHex), ErrMalformed},
		{"compressed targetPublic", envelope("v1.0.0", []byte(`{"targetPublic":"`+target.CompressedHex()+`"}`), sig, signerHex), ErrMalformed},
		{"targetPublic off curve", envelope("v1.0.0", []byte(`{"targetPublic":"`+offCurveHex(target.UncompressedHex())+`"}`), sig, signerHex), ErrMalformed},
		{"data not JSON", envelope("v1.0.0", []byte("targetPublic"), sig, signerHex), ErrMalformed},
		{"data with a number", envelope("v1.0.0", []byte(`{"targetPublic":"`+target.UncompressedHex()+`","n":1}`), sig, signerHex), ErrMalformed},
		{"compressed signer", envelope("v1.0.0", data, sig, signer.PublicKey().CompressedHex()), ErrMalformed},
		{"signer off curve", envelope("v1.0.0", data, sig, offCurveHex(signerHex)), ErrMalformed},
		{"data not hex", strings.Replace(envelope("v1.0.0", data, sig, signerHex), `"data":"7b`, `"data":"zz`, 1), ErrMalformed},
		{"signature not hex", strings.Replace(envelope("v1.0.0", data, sig, signerHex), `"dataSignature":"30`, `"dataSignature":"x0`, 1), ErrMalformed},
		{"missing version", strings.Replace(envelope("v1.0.0", data, sig, signerHex), `"version":"v1.0.0",`, ``, 1), ErrMalformed},
		{"unknown key", strings.Replace(envelope("v1.0.0", data, sig, signerHex), `{`, `{"x":"y",`, 1), ErrMalformed},
		{"not JSON", "v1.0.0", ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := VerifyTargetBundle(tt.in, signer.PublicKey())
			if tt.want == nil {
				if err != nil || !got.Equal(target) {
					t.Fatalf("VerifyTargetBundle = %v, %v", got, err)
				}
				return
			}
			if got != nil || !isErr(err, tt.want) {
				t.Fatalf("VerifyTargetBundle = %v, %v; want %v", got, err, tt.want)
			}
			if tt.want == ErrMalformed {
				if b, err := ParseTargetBundle(tt.in); b != nil || err == nil {
					t.Fatalf("ParseTargetBundle = %v, %v", b, err)
				}
			}
		})
	}
	if _, err := VerifyTargetBundle(envelope("v1.0.0", data, sig, signerHex), nil); !isErr(err, ErrSignerMismatch) {
		t.Fatalf("nil pinned key: %v", err)
	}
}
