package webhooksig

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newSigner(t testing.TB) *Signer {
	t.Helper()
	s, err := NewSigner(newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const body = `{"id":"Webhook:0199a3c4-0000-7000-8000-000000000001","type":"OUTGOING_PAYMENT.COMPLETED","timestamp":"2026-11-22T12:00:00Z","data":{"id":"Transaction:x"},"sequence":3}`

func TestSignVerify(t *testing.T) {
	s := newSigner(t)
	other := newSigner(t)
	keys := JWKS{Keys: []JWK{other.JWK(), s.JWK()}}
	now := time.Unix(1_800_000_000, 0)
	h, err := s.Sign("Webhook:0199a3c4-0000-7000-8000-000000000001", []byte(body), now)
	if err != nil {
		t.Fatal(err)
	}
	otherBody := strings.Replace(body, `"sequence":3`, `"sequence":4`, 1)
	wrongID, err := s.Sign("Webhook:0199a3c4-0000-7000-8000-000000000002", []byte(body), now)
	if err != nil {
		t.Fatal(err)
	}
	byOther, err := other.Sign("Webhook:0199a3c4-0000-7000-8000-000000000001", []byte(body), now)
	if err != nil {
		t.Fatal(err)
	}
	sig, _ := ParseHeader(h.Signature)
	swappedKid := Signature{Timestamp: sig.Timestamp, KeyID: other.KeyID(), V1: sig.V1}.String()
	laterT := Signature{Timestamp: sig.Timestamp + 1, KeyID: sig.KeyID, V1: sig.V1}.String()
	cases := []struct {
		name   string
		header string
		body   string
		keys   JWKS
		now    time.Time
		want   error
	}{
		{"valid", h.Signature, body, keys, now, nil},
		{"valid 5 minutes later", h.Signature, body, keys, now.Add(Tolerance), nil},
		{"valid with clock 5 minutes behind", h.Signature, body, keys, now.Add(-Tolerance), nil},
		{"valid by the other key", byOther.Signature, body, keys, now, nil},
		{"too old", h.Signature, body, keys, now.Add(Tolerance + time.Second), ErrTimestamp},
		{"from the future", h.Signature, body, keys, now.Add(-Tolerance - time.Second), ErrTimestamp},
		{"body changed", h.Signature, otherBody, keys, now, ErrSignature},
		{"signed for another id", wrongID.Signature, body, keys, now, ErrSignature},
		{"timestamp changed", laterT, body, keys, now, ErrSignature},
		{"kid of another key", swappedKid, body, keys, now, ErrSignature},
		{"key not in the set", h.Signature, body, JWKS{Keys: []JWK{other.JWK()}}, now, ErrUnknownKey},
		{"empty key set", h.Signature, body, JWKS{}, now, ErrUnknownKey},
		{"empty header", "", body, keys, now, ErrMalformed},
		{"compat value in the wrong header", h.Compat, body, keys, now, ErrMalformed},
		{"body without id", h.Signature, `{"type":"TEST"}`, keys, now, ErrBody},
		{"body with two ids", h.Signature, `{"id":"a","id":"b"}`, keys, now, ErrBody},
		{"body not JSON", h.Signature, `id=1`, keys, now, ErrBody},
		{"body with trailing data", h.Signature, body + `{}`, keys, now, ErrBody},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, err := Verify(c.header, []byte(c.body), c.keys, c.now)
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
			if c.want == nil && id != "Webhook:0199a3c4-0000-7000-8000-000000000001" {
				t.Fatalf("id %q", id)
			}
		})
	}
}

func TestVerifyCompat(t *testing.T) {
	s := newSigner(t)
	keys := JWKS{Keys: []JWK{newSigner(t).JWK(), s.JWK()}}
	h, err := s.Sign("Webhook:1", []byte(body), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ V, S string }
	if err := json.Unmarshal([]byte(h.Compat), &v); err != nil || v.V != "1" || !strings.HasPrefix(h.Compat, `{"v":"1","s":"`) {
		t.Fatalf("compat header %s: %v", h.Compat, err)
	}
	cases := []struct {
		name, header, body string
		want               error
	}{
		{"json form", h.Compat, body, nil},
		{"bare base64", v.S, body, nil},
		{"body changed", h.Compat, body + " ", ErrSignature},
		{"version 2", strings.Replace(h.Compat, `"v":"1"`, `"v":"2"`, 1), body, ErrMalformed},
		{"numeric version", strings.Replace(h.Compat, `"v":"1"`, `"v":1`, 1), body, ErrMalformed},
		{"not base64", `{"v":"1","s":"***"}`, body, ErrMalformed},
		{"empty", "", body, ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := VerifyCompat(c.header, []byte(c.body), keys)
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
		})
	}
}

func TestParseHeader(t *testing.T) {
	sig := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x30}, 70))
	cases := []struct {
		header string
		ok     bool
	}{
		{"t=1800000000,kid=0123456789abcdef,v1=" + sig, true},
		{"kid=0123456789abcdef, v1=" + sig + ", t=1800000000", true},
		{"t=1800000000,kid=k,v1=" + sig + ",v2=whatever", true},
		{"t=1800000000,kid=k", false},
		{"t=1800000000,v1=" + sig, false},
		{"kid=k,v1=" + sig, false},
		{"t=1800000000,t=1800000001,kid=k,v1=" + sig, false},
		{"t=1800000000,kid=k,kid=l,v1=" + sig, false},
		{"t=1800000000,kid=k,v1=" + sig + ",v1=" + sig, false},
		{"t=-1,kid=k,v1=" + sig, false},
		{"t=+1,kid=k,v1=" + sig, false},
		{"t=99999999999999999999,kid=k,v1=" + sig, false},
		{"t=1,kid=k k,v1=" + sig, false},
		{"t=1,kid=,v1=" + sig, false},
		{"t=1,kid=k,v1=" + strings.TrimRight(sig, "="), false},
		{"t=1,kid=k,v1=AAAA", false},
		{"t=1,kid=k,v1=" + sig + ",X-Y=1", false},
		{"t=1,kid=k,v1=" + sig + ",", false},
		{"t=1,kid=k,v1=" + sig + "," + strings.Repeat("a", 1024), false},
		{"", false},
	}
	for _, c := range cases {
		s, err := ParseHeader(c.header)
		if (err == nil) != c.ok {
			t.Errorf("ParseHeader(%q): %v", c.header, err)
			continue
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseHeader(%q): %v is not ErrMalformed", c.header, err)
		}
		if c.ok {
			if again, err := ParseHeader(s.String()); err != nil || again.String() != s.String() {
				t.Errorf("round trip of %q: %q, %v", c.header, again.String(), err)
			}
		}
	}
}

// FuzzParseHeader: the parser never panics, accepts only headers with t,
// kid and v1, and what it accepts formats to a header that parses to the
// same signature.
func FuzzParseHeader(f *testing.F) {
	sig := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x30}, 70))
	f.Add("t=1800000000,kid=0123456789abcdef,v1=" + sig)
	f.Add("kid=k, v1=" + sig + ", t=1, v9=x")
	f.Add("t=1,t=2")
	f.Add("t=1,kid=a,v1=" + sig + ",kid=b,v1=" + sig)
	f.Add("kid=a,kid=b,v1=" + sig + ",t=1,v1=" + sig + ",kid=a")
	f.Add(",,,=")
	f.Fuzz(func(t *testing.T, h string) {
		s, err := ParseHeader(h)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		if s.KeyID == "" || len(s.V1) == 0 || s.Timestamp < 0 {
			t.Fatalf("accepted %q as %+v", h, s)
		}
		kids := map[string]bool{}
		for _, p := range s.Pairs() {
			if p.KeyID == "" || len(p.V1) == 0 || kids[p.KeyID] {
				t.Fatalf("accepted %q as %+v", h, s)
			}
			kids[p.KeyID] = true
		}
		again, err := ParseHeader(s.String())
		if err != nil {
			t.Fatalf("%q formatted as %q, which does not parse: %v", h, s.String(), err)
		}
		if again.Timestamp != s.Timestamp || again.KeyID != s.KeyID || !bytes.Equal(again.V1, s.V1) || len(again.More) != len(s.More) {
			t.Fatalf("round trip %+v -> %+v", s, again)
		}
		for i := range s.More {
			if again.More[i].KeyID != s.More[i].KeyID || !bytes.Equal(again.More[i].V1, s.More[i].V1) {
				t.Fatalf("round trip %+v -> %+v", s, again)
			}
		}
	})
}

// FuzzWebhookID: WebhookID never panics, and an id it finds is the one
// encoding/json finds.
func FuzzWebhookID(f *testing.F) {
	f.Add([]byte(body))
	f.Add([]byte(`{"id":"a","id":"b"}`))
	f.Add([]byte(`{"ID":"a"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := WebhookID(b)
		if err != nil {
			return
		}
		var v struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(b, &v) != nil || v.ID != id {
			t.Fatalf("WebhookID %q, encoding/json %q (%q)", id, v.ID, b)
		}
	})
}

func TestJWKS(t *testing.T) {
	a, b := newSigner(t), newSigner(t)
	set := JWKS{Keys: []JWK{a.JWK(), b.JWK()}}
	raw, err := set.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseJWKS(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Keys) != 2 || got.Keys[0] != a.JWK() || got.Keys[1] != b.JWK() {
		t.Fatalf("round trip: %+v", got)
	}
	k := a.JWK()
	if k.Kty != "EC" || k.Crv != "P-256" || k.Use != "sig" || k.Alg != "ES256" || len(k.X) != 43 || len(k.Y) != 43 {
		t.Fatalf("jwk %+v", k)
	}
	// kid = first 16 hex digits of SHA-256(04 || X || Y).
	x, _ := base64.RawURLEncoding.DecodeString(k.X)
	y, _ := base64.RawURLEncoding.DecodeString(k.Y)
	h := sha256.Sum256(append(append([]byte{4}, x...), y...))
	if k.Kid != hex.EncodeToString(h[:8]) || k.Kid != a.KeyID() {
		t.Fatalf("kid %s", k.Kid)
	}
	pub, err := got.Key(a.KeyID())
	if err != nil || !pub.Equal(&a.key.PublicKey) {
		t.Fatalf("Key: %v", err)
	}
	if _, err := got.Key("nope"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("unknown kid: %v", err)
	}

	offCurve := a.JWK()
	offCurve.Y = offCurve.X
	dup := JWKS{Keys: []JWK{a.JWK(), a.JWK()}}
	dupRaw, _ := dup.Marshal()
	for name, doc := range map[string]string{
		"empty":        `{"keys":[]}`,
		"not json":     `keys`,
		"RSA":          `{"keys":[{"kty":"RSA","crv":"P-256","x":"` + k.X + `","y":"` + k.Y + `","kid":"a"}]}`,
		"P-384":        `{"keys":[{"kty":"EC","crv":"P-384","x":"` + k.X + `","y":"` + k.Y + `","kid":"a"}]}`,
		"short x":      `{"keys":[{"kty":"EC","crv":"P-256","x":"AAAA","y":"` + k.Y + `","kid":"a"}]}`,
		"no kid":       `{"keys":[{"kty":"EC","crv":"P-256","x":"` + k.X + `","y":"` + k.Y + `"}]}`,
		"enc use":      `{"keys":[{"kty":"EC","crv":"P-256","x":"` + k.X + `","y":"` + k.Y + `","kid":"a","use":"enc"}]}`,
		"off curve":    `{"keys":[{"kty":"EC","crv":"P-256","x":"` + offCurve.X + `","y":"` + offCurve.Y + `","kid":"a"}]}`,
		"kid repeated": string(dupRaw),
	} {
		if _, err := ParseJWKS([]byte(doc)); !errors.Is(err, ErrKey) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if empty, _ := (JWKS{}).Marshal(); string(empty) != `{"keys":[]}` {
		t.Fatalf("empty set: %s", empty)
	}
}

func TestNewSignerRefusesOtherCurves(t *testing.T) {
	k, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewSigner(k); !errors.Is(err, ErrKey) {
		t.Fatalf("P-384: %v", err)
	}
	if _, err := NewSigner(nil); !errors.Is(err, ErrKey) {
		t.Fatalf("nil: %v", err)
	}
}

// TestImports holds the import rule: shared/ imports nothing of the module
// but shared/, and this package needs nothing but the standard library.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			ours := strings.HasPrefix(p, "paywallet/")
			test := strings.HasSuffix(name, "_test.go")
			if strings.Contains(strings.Split(p, "/")[0], ".") || (ours && !test) || (ours && !strings.HasPrefix(p, "paywallet/shared/")) {
				t.Errorf("%s imports %s", name, p)
			}
		}
	}
}
