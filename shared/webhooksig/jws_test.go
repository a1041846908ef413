package webhooksig

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
)

// TestJWS: a signed document verifies with the key set and with nothing
// but the RFC 7515/7518 recipe (base64url parts, SHA-256 over the first
// two, R ‖ S), and every change to it is refused.
func TestJWS(t *testing.T) {
	s, other := newSigner(t), newSigner(t)
	keys := JWKS{Keys: []JWK{other.JWK(), s.JWK()}}
	payload := []byte(`{"sequence":7,"hash":"00ff","at":"2026-11-22T12:00:00Z"}`)
	jws, err := s.SignJWS("paywallet-ledger-head", payload)
	if err != nil {
		t.Fatal(err)
	}
	h, got, err := VerifyJWS(jws, keys)
	if err != nil || string(got) != string(payload) || h != (JWSHeader{Alg: "ES256", Kid: s.KeyID(), Typ: "paywallet-ledger-head"}) {
		t.Fatalf("VerifyJWS: %+v %s %v", h, got, err)
	}

	// By hand, as a receiver without this package would.
	parts := strings.Split(jws, ".")
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	pub, _ := keys.Key(s.KeyID())
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("the signature is not R ‖ S over the signing input")
	}

	enc := base64.RawURLEncoding.EncodeToString
	header := func(v any) string {
		b, _ := json.Marshal(v)
		return enc(b)
	}
	flipped := append([]byte(nil), sig...)
	flipped[10] ^= 1
	byOther, err := other.SignJWS("paywallet-ledger-head", payload)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		jws  string
		keys JWKS
		want error
	}{
		{"payload changed", parts[0] + "." + enc([]byte(strings.Replace(string(payload), "7", "8", 1))) + "." + parts[2], keys, ErrSignature},
		{"signature changed", parts[0] + "." + parts[1] + "." + enc(flipped), keys, ErrSignature},
		{"another key's signature under this kid", parts[0] + "." + parts[1] + "." + strings.Split(byOther, ".")[2], keys, ErrSignature},
		{"key not in the set", jws, JWKS{Keys: []JWK{other.JWK()}}, ErrUnknownKey},
		{"alg none", header(map[string]string{"alg": "none", "kid": s.KeyID()}) + "." + parts[1] + ".", keys, ErrMalformed},
		{"alg HS256", header(map[string]string{"alg": "HS256", "kid": s.KeyID()}) + "." + parts[1] + "." + parts[2], keys, ErrMalformed},
		{"crit header", header(map[string]any{"alg": "ES256", "kid": s.KeyID(), "crit": []string{"exp"}}) + "." + parts[1] + "." + parts[2], keys, ErrMalformed},
		{"two parts", parts[0] + "." + parts[1], keys, ErrMalformed},
		{"padded base64", parts[0] + "=." + parts[1] + "." + parts[2], keys, ErrMalformed},
		{"DER signature", parts[0] + "." + parts[1] + "." + enc(append([]byte{0x30, 0x44}, sig...)), keys, ErrMalformed},
		{"too long", strings.Repeat("a", maxJWS+1), keys, ErrMalformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := VerifyJWS(c.jws, c.keys); !errors.Is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
		})
	}
}
