//go:build !js

package walletcrypto

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
)

// kat mirrors testdata/kat.json (wallet-crypto-facts §8 and §6).
type kat struct {
	Source string `json:"_source"`
	APIKey struct {
		Private          string `json:"private"`
		PublicCompressed string `json:"publicCompressed"`
	} `json:"apiKey"`
	CredentialBundle struct {
		ReceiverPrivate string `json:"receiverPrivate"`
		Bundle          string `json:"bundle"`
		Plaintext       string `json:"plaintext"`
	} `json:"credentialBundle"`
	Stamp struct {
		Private      string `json:"private"`
		Payload      string `json:"payload"`
		SignatureDER string `json:"signatureDer"`
	} `json:"stamp"`
	FixedEphemeralHPKE struct {
		ReceiverPrivate  string `json:"receiverPrivate"`
		EphemeralPrivate string `json:"ephemeralPrivate"`
		Plaintext        string `json:"plaintext"`
		Bundle           string `json:"bundle"`
		EncCompressed    string `json:"encCompressed"`
		Ciphertext       string `json:"ciphertext"`
	} `json:"fixedEphemeralHpke"`
	PinnedKeys map[string]string `json:"pinnedKeys"`
}

func loadKAT(t testing.TB) *kat {
	t.Helper()
	b, err := os.ReadFile("testdata/kat.json")
	if err != nil {
		t.Fatal(err)
	}
	var v kat
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("testdata/kat.json: %v", err)
	}
	return &v
}

func mustPrivateKey(t testing.TB, scalarHex string) *PrivateKey {
	t.Helper()
	k, err := NewPrivateKey(mustHex(t, scalarHex))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustGenerateKey(t testing.TB) *PrivateKey {
	t.Helper()
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// signDER signs SHA-256(msg) with k, independently of SignStamp.
func signDER(t testing.TB, k *PrivateKey, msg []byte) []byte {
	t.Helper()
	d := sha256.Sum256(msg)
	sig, err := ecdsa.SignASN1(rand.Reader, k.ecdsa, d[:])
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// b64 is the stamp's outer encoding.
func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// offCurveHex flips the lowest bit of y in an uncompressed hex point. (x, y^1) is
// on the curve only if y^1 = p - y, which no random key hits.
func offCurveHex(u string) string {
	b, _ := hex.DecodeString(u)
	b[len(b)-1] ^= 1
	return hex.EncodeToString(b)
}
