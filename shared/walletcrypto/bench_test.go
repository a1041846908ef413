//go:build !js

package walletcrypto

import "testing"

var benchPayload = []byte(`{"type":"ACTIVITY_TYPE_CREATE_QUOTE","timestampMs":"1760000000000","organizationId":"00000000-0000-0000-0000-000000000000","parameters":{"quoteId":"Quote:1"}}`)

// BenchmarkGenerateKey measures a new key with its ECDSA, ECDH and HPKE
// forms, as the wasm module's generateKey makes it.
func BenchmarkGenerateKey(b *testing.B) {
	for b.Loop() {
		if _, err := GenerateKey(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSignStamp(b *testing.B) {
	k := mustGenerateKey(b)
	for b.Loop() {
		if _, err := SignStamp(k, benchPayload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyStamp measures what the service does per request: parse the
// header (including decompressing the key) and verify.
func BenchmarkVerifyStamp(b *testing.B) {
	h, err := SignStamp(mustGenerateKey(b), benchPayload)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		st, err := ParseStamp(h)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Verify(benchPayload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSeal seals an OTP plaintext in the JSON form, as the wasm module does.
func BenchmarkSeal(b *testing.B) {
	to := mustGenerateKey(b).PublicKey()
	client := mustGenerateKey(b).PublicKey()
	for b.Loop() {
		if _, err := SealOTP(to, "123456", client); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenCredentialBundle(b *testing.B) {
	k := mustGenerateKey(b)
	s, err := SealSessionKey(k.PublicKey(), mustGenerateKey(b))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := OpenCredentialBundle(k, s); err != nil {
			b.Fatal(err)
		}
	}
}
