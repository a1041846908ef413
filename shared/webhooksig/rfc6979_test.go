package webhooksig

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"
)

// rfc6979Key is the P-256 key of RFC 6979, appendix A.2.5.
func rfc6979Key(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	d, err := hex.DecodeString("C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721")
	if err != nil {
		t.Fatal(err)
	}
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// derRS splits a DER ECDSA signature into upper-case hex r and s.
func derRS(t *testing.T, der []byte) (string, string) {
	t.Helper()
	var sig struct{ R, S *big.Int }
	if rest, err := asn1.Unmarshal(der, &sig); err != nil || len(rest) > 0 {
		t.Fatalf("not a DER signature: %v", err)
	}
	return strings.ToUpper(hex.EncodeToString(sig.R.FillBytes(make([]byte, 32)))),
		strings.ToUpper(hex.EncodeToString(sig.S.FillBytes(make([]byte, 32))))
}

// TestCompatSignatureRFC6979: the body-only X-Service-Signature is the
// deterministic ECDSA signature of RFC 6979 (its P-256/SHA-256 vectors for
// the messages "sample" and "test", signed as webhook bodies), from Keys
// and from a lone Signer, and the same on every delivery.
func TestCompatSignatureRFC6979(t *testing.T) {
	ec := rfc6979Key(t)
	g, err := NewGeneration(ec, ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	keys := newKeys(t, []*Generation{g}, nil)
	signer, err := NewSigner(ec)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ body, r, s string }{
		{"sample", "EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716",
			"F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8"},
		{"test", "F1ABB023518351CD71D881567B1EA663ED3EFCF6C5132B354F28D3B0B7D38367",
			"019F4113742A2B14BD25926B49C649155F267E60D3814B4C0CC84250E46F0083"},
	} {
		for _, sign := range []struct {
			name string
			fn   func(id string, body []byte, now time.Time) (Headers, error)
		}{{"Keys", keys.Sign}, {"Signer", signer.Sign}} {
			var first string
			for i, now := range []time.Time{time.Unix(1_700_000_000, 0), time.Unix(1_700_000_090, 0)} {
				h, err := sign.fn(hookID, []byte(tc.body), now)
				if err != nil {
					t.Fatal(err)
				}
				var c compatValue
				if err := json.Unmarshal([]byte(h.Compat), &c); err != nil {
					t.Fatal(err)
				}
				der, err := base64.StdEncoding.DecodeString(c.S)
				if err != nil {
					t.Fatal(err)
				}
				if r, s := derRS(t, der); r != tc.r || s != tc.s {
					t.Errorf("%s %q: r=%s s=%s, want RFC 6979's r=%s s=%s", sign.name, tc.body, r, s, tc.r, tc.s)
				}
				if i == 0 {
					first = h.Compat
				} else if h.Compat != first {
					t.Errorf("%s %q: a second delivery's X-Service-Signature differs", sign.name, tc.body)
				}
			}
		}
	}
}

// TestDeliverySignatureDeterministic: the timed signatures (ECDSA and
// Ed25519) depend only on the key, the id, the time and the body.
func TestDeliverySignatureDeterministic(t *testing.T) {
	keys := newKeys(t, []*Generation{newGeneration(t), newGeneration(t)}, nil)
	body := []byte(`{"id":"` + hookID + `","type":"OUTGOING_PAYMENT.COMPLETED","data":{}}`)
	now := time.Unix(1_700_000_000, 0)
	a, err := keys.Sign(hookID, body, now)
	if err != nil {
		t.Fatal(err)
	}
	b, err := keys.Sign(hookID, body, now)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatalf("two signatures of one delivery differ:\n%+v\n%+v", a, b)
	}
	if _, err := Verify(a.Signature, body, keys.JWKS(), now); err != nil {
		t.Fatal(err)
	}
	if err := VerifyCompat(a.Compat, body, keys.JWKS()); err != nil {
		t.Fatal(err)
	}
	c, err := keys.Sign(hookID, body, now.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if c.Signature == a.Signature || c.StdSignature == a.StdSignature {
		t.Fatal("a delivery a second later has the same timed signatures")
	}
}
