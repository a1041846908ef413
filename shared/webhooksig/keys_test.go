package webhooksig

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func newGeneration(t testing.TB) *Generation {
	t.Helper()
	g, err := GenerateGeneration()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func newKeys(t testing.TB, signing, published []*Generation) *Keys {
	t.Helper()
	k, err := NewKeys(signing, published)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// jwksOf is a receiver's key set holding only the given keys.
func jwksOf(keys ...JWK) JWKS { return JWKS{Keys: keys} }

const hookID = "Webhook:0199a3c4-0000-7000-8000-000000000001"

// TestGenerationBytes: a generation restored from its bytes has the same
// keys, kids and public keys; other bytes are refused.
func TestGenerationBytes(t *testing.T) {
	g := newGeneration(t)
	b, err := g.MarshalPrivate()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 65 || b[0] != 1 {
		t.Fatalf("encoding %d bytes, version %d", len(b), b[0])
	}
	back, err := ParseGeneration(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.KeyID() != g.KeyID() || back.Ed25519KeyID() != g.Ed25519KeyID() || back.PublicKey() != g.PublicKey() ||
		!back.ec.key.Equal(g.ec.key) || !back.ed.Equal(g.ed) {
		t.Fatal("the restored generation differs")
	}
	clear(b) // the caller clears what it was given back; the generation kept nothing of it
	if !back.ec.key.Equal(g.ec.key) || !back.ed.Equal(g.ed) {
		t.Fatal("the generation shares memory with the bytes it was parsed from")
	}

	good, _ := g.MarshalPrivate()
	n := elliptic.P256().Params().N.FillBytes(make([]byte, 32))
	for name, bad := range map[string][]byte{
		"empty":       nil,
		"short":       good[:64],
		"long":        append(append([]byte(nil), good...), 0),
		"version 2":   append([]byte{2}, good[1:]...),
		"zero scalar": append(append([]byte{1}, make([]byte, 32)...), good[33:]...),
		"scalar = n":  append(append([]byte{1}, n...), good[33:]...),
	} {
		if _, err := ParseGeneration(bad); !errors.Is(err, ErrKey) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestNewGeneration: an existing P-256 key keeps its kid (receivers that
// know it keep working); the kids are derived from the public keys.
func TestNewGeneration(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGeneration(ec, ed)
	if err != nil {
		t.Fatal(err)
	}
	pub := ed.Public().(ed25519.PublicKey)
	h := sha256.Sum256(pub)
	if g.KeyID() != KeyID(&ec.PublicKey) || g.Ed25519KeyID() != hex.EncodeToString(h[:8]) {
		t.Fatalf("kids %s %s", g.KeyID(), g.Ed25519KeyID())
	}
	if g.PublicKey() != "whpk_"+base64.StdEncoding.EncodeToString(pub) || !g.Ed25519PublicKey().Equal(pub) {
		t.Fatalf("whpk %s", g.PublicKey())
	}
	if _, err := NewGeneration(ec, ed[:32]); !errors.Is(err, ErrKey) {
		t.Fatalf("short ed25519 key: %v", err)
	}
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if _, err := NewGeneration(p384, ed); !errors.Is(err, ErrKey) {
		t.Fatalf("P-384: %v", err)
	}
}

func TestNewKeysRefuses(t *testing.T) {
	a, b := newGeneration(t), newGeneration(t)
	for name, c := range map[string]struct{ signing, published []*Generation }{
		"no signing generation":    {nil, []*Generation{a}},
		"five signing generations": {[]*Generation{a, b, newGeneration(t), newGeneration(t), newGeneration(t)}, nil},
		"signing twice":            {[]*Generation{a, a}, nil},
		"signing and published":    {[]*Generation{a}, []*Generation{b, a}},
		"nil":                      {[]*Generation{a, nil}, nil},
	} {
		if _, err := NewKeys(c.signing, c.published); !errors.Is(err, ErrKey) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

var oneKeyHeader = regexp.MustCompile(`^t=[0-9]+,kid=[0-9a-f]{16},v1=[A-Za-z0-9+/]+={0,2}$`)

// TestKeysOneGeneration: with one generation, the set's two ECDSA headers
// have the shape a Signer's have always had, and all three signatures
// verify.
func TestKeysOneGeneration(t *testing.T) {
	g := newGeneration(t)
	keys := newKeys(t, []*Generation{g}, nil)
	now := time.Unix(1_800_000_000, 0)
	h, err := keys.Sign(hookID, []byte(body), now)
	if err != nil {
		t.Fatal(err)
	}
	old, err := g.Signer().Sign(hookID, []byte(body), now)
	if err != nil {
		t.Fatal(err)
	}
	if !oneKeyHeader.MatchString(h.Signature) || !strings.HasPrefix(h.Signature, "t=1800000000,kid="+g.KeyID()+",v1=") {
		t.Fatalf("Service-Webhook-Signature %s", h.Signature)
	}
	if strings.SplitAfter(h.Signature, "v1=")[0] != strings.SplitAfter(old.Signature, "v1=")[0] ||
		!strings.HasPrefix(h.Compat, `{"v":"1","s":"`) || !strings.HasSuffix(h.Compat, `"}`) {
		t.Fatalf("set %+v, signer %+v", h, old)
	}
	if h.StdID != hookID || h.StdTimestamp != "1800000000" || !regexp.MustCompile(`^v1a,[A-Za-z0-9+/]{86}==$`).MatchString(h.StdSignature) {
		t.Fatalf("standard headers %q %q %q", h.StdID, h.StdTimestamp, h.StdSignature)
	}
	jwks := keys.JWKS()
	if id, err := Verify(h.Signature, []byte(body), jwks, now); err != nil || id != hookID {
		t.Fatalf("Verify: %q %v", id, err)
	}
	if err := VerifyCompat(h.Compat, []byte(body), jwks); err != nil {
		t.Fatalf("VerifyCompat: %v", err)
	}
	if err := VerifyStandard(h.StdID, h.StdTimestamp, h.StdSignature, []byte(body), jwks.Ed25519Keys(), now); err != nil {
		t.Fatalf("VerifyStandard with the JWKS: %v", err)
	}
	pub, err := ParseStandardPublicKey(keys.PublicKeys()[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyStandard(h.StdID, h.StdTimestamp, h.StdSignature, []byte(body), []ed25519.PublicKey{pub}, now); err != nil {
		t.Fatalf("VerifyStandard with the whpk_ key: %v", err)
	}
	if _, err := keys.Sign("Webhook:a.b", []byte(body), now); !errors.Is(err, ErrMalformed) {
		t.Fatalf("an id with a dot: %v", err)
	}
}

// TestKeysRotation: with three generations signing (a the oldest), every
// header carries each key's signature in the documented order, and a
// receiver that knows any one of the keys accepts the delivery, with each
// of the three verifiers; X-Service-Signature is the primary's alone.
func TestKeysRotation(t *testing.T) {
	a, b, c, next := newGeneration(t), newGeneration(t), newGeneration(t), newGeneration(t)
	keys := newKeys(t, []*Generation{a, b, c}, []*Generation{next})
	now := time.Unix(1_800_000_000, 0)
	h, err := keys.Sign(hookID, []byte(body), now)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := ParseHeader(h.Signature)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sig.KeyIDs(), []string{c.KeyID(), b.KeyID(), a.KeyID()}; !slices.Equal(got, want) || sig.KeyID != a.KeyID() {
		t.Fatalf("kids %v, want %v (newest first, the primary last)", got, want)
	}
	if n := len(h.Signature); n > 600 {
		t.Fatalf("a header of three pairs is %d bytes", n)
	}
	entries := strings.Split(h.StdSignature, " ")
	if len(entries) != 3 {
		t.Fatalf("webhook-signature %q", h.StdSignature)
	}
	for i, g := range []*Generation{c, b, a} {
		one := []ed25519.PublicKey{g.Ed25519PublicKey()}
		if err := VerifyStandard(h.StdID, h.StdTimestamp, entries[i], []byte(body), one, now); err != nil {
			t.Fatalf("entry %d is not generation %s's: %v", i, g.KeyID(), err)
		}
	}
	if p := keys.Primary(); p != a {
		t.Fatalf("primary %s", p.KeyID())
	}

	stranger := newGeneration(t)
	for _, c := range []struct {
		name        string
		known       []*Generation
		wantHeader  error
		wantCompat  error
		wantStdHook error
	}{
		{"knows every key", []*Generation{a, b, c, next}, nil, nil, nil},
		{"knows the primary only", []*Generation{a}, nil, nil, nil},
		{"knows the middle one only", []*Generation{b}, nil, ErrSignature, nil},
		{"knows the newest only", []*Generation{c}, nil, ErrSignature, nil},
		{"knows only the announced one", []*Generation{next}, ErrUnknownKey, ErrSignature, ErrSignature},
		{"knows none", []*Generation{stranger}, ErrUnknownKey, ErrSignature, ErrSignature},
	} {
		t.Run(c.name, func(t *testing.T) {
			var set JWKS
			for _, g := range c.known {
				set.Keys = append(set.Keys, g.JWKs()...)
			}
			if _, err := Verify(h.Signature, []byte(body), set, now); !is(err, c.wantHeader) {
				t.Errorf("Verify: %v, want %v", err, c.wantHeader)
			}
			if err := VerifyCompat(h.Compat, []byte(body), set); !is(err, c.wantCompat) {
				t.Errorf("VerifyCompat: %v, want %v", err, c.wantCompat)
			}
			if err := VerifyStandard(h.StdID, h.StdTimestamp, h.StdSignature, []byte(body), set.Ed25519Keys(), now); !is(err, c.wantStdHook) {
				t.Errorf("VerifyStandard: %v, want %v", err, c.wantStdHook)
			}
		})
	}

	// One known pair that does not verify is not saved by pairs of keys
	// the receiver does not know, though they would verify.
	broken := sig
	broken.V1 = append([]byte(nil), sig.More[0].V1...)
	if _, err := Verify(broken.String(), []byte(body), jwksOf(a.JWKs()...), now); !errors.Is(err, ErrSignature) {
		t.Fatalf("the primary's pair replaced: %v", err)
	}
	if _, err := Verify(broken.String(), []byte(body), keys.JWKS(), now); err != nil {
		t.Fatalf("the primary's pair replaced, but b's verifies: %v", err)
	}
	if _, err := Verify(h.Signature, []byte(body+" "), keys.JWKS(), now); !errors.Is(err, ErrSignature) {
		t.Fatalf("body changed: %v", err)
	}
	if _, err := Verify(h.Signature, []byte(body), keys.JWKS(), now.Add(Tolerance+time.Second)); !errors.Is(err, ErrTimestamp) {
		t.Fatalf("too late: %v", err)
	}
}

func is(err, want error) bool { return errors.Is(err, want) && (want == nil) == (err == nil) }

// readmeVerifyWebhook is the README's standard-library verifier, as a
// receiver may have copied it: it keeps the last kid and the last v1.
func readmeVerifyWebhook(header string, body, jwks []byte, now time.Time) (string, error) {
	var t int64
	var kid string
	var sig []byte
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			t, _ = strconv.ParseInt(v, 10, 64)
		case "kid":
			kid = v
		case "v1":
			sig, _ = base64.StdEncoding.DecodeString(v)
		}
	}
	if t == 0 || kid == "" || sig == nil {
		return "", errors.New("malformed signature header")
	}
	if d := now.Sub(time.Unix(t, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return "", errors.New("signature timestamp outside 5 minutes")
	}
	var set struct {
		Keys []struct{ Kty, Crv, X, Y, Kid string } `json:"keys"`
	}
	if err := json.Unmarshal(jwks, &set); err != nil {
		return "", err
	}
	var pub *ecdsa.PublicKey
	for _, k := range set.Keys {
		if k.Kid != kid || k.Kty != "EC" || k.Crv != "P-256" {
			continue
		}
		x, errX := base64.RawURLEncoding.DecodeString(k.X)
		y, errY := base64.RawURLEncoding.DecodeString(k.Y)
		if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
			return "", errors.New("bad key in JWKS")
		}
		p, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return "", err
		}
		pub = p
	}
	if pub == nil {
		return "", errors.New("unknown kid: fetch the JWKS again")
	}
	var env struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.ID == "" {
		return "", errors.New("body has no webhook id")
	}
	digest := sha256.Sum256([]byte(env.ID + "." + strconv.FormatInt(t, 10) + "." + string(body)))
	if !ecdsa.VerifyASN1(pub, digest[:], sig) {
		return "", errors.New("signature does not verify")
	}
	return env.ID, nil
}

// TestREADMEVerifier: a receiver running the README's sample keeps working
// through a rotation: it checks the last pair, the primary's, against the
// key it already has, and skips the Ed25519 keys of the JWKS.
func TestREADMEVerifier(t *testing.T) {
	a, b := newGeneration(t), newGeneration(t)
	now := time.Unix(1_800_000_000, 0)
	for _, signing := range [][]*Generation{{a}, {a, b}} {
		keys := newKeys(t, signing, nil)
		h, err := keys.Sign(hookID, []byte(body), now)
		if err != nil {
			t.Fatal(err)
		}
		full, _ := keys.JWKS().Marshal()
		primaryOnly, _ := jwksOf(a.Signer().JWK()).Marshal()
		for name, doc := range map[string][]byte{"the published JWKS": full, "the primary's key it kept": primaryOnly} {
			if id, err := readmeVerifyWebhook(h.Signature, []byte(body), doc, now); err != nil || id != hookID {
				t.Errorf("%d signing, %s: %q %v", len(signing), name, id, err)
			}
		}
	}
}

// TestKeysJWKS: the JWKS lists both keys of every generation, signing ones
// first; the Ed25519 key has the RFC 8037 shape; ParseJWKS reads it back.
func TestKeysJWKS(t *testing.T) {
	a, b, old := newGeneration(t), newGeneration(t), newGeneration(t)
	keys := newKeys(t, []*Generation{a, b}, []*Generation{old})
	set := keys.JWKS()
	var kids []string
	for _, k := range set.Keys {
		kids = append(kids, k.Kid)
	}
	want := []string{a.KeyID(), a.Ed25519KeyID(), b.KeyID(), b.Ed25519KeyID(), old.KeyID(), old.Ed25519KeyID()}
	if !slices.Equal(kids, want) {
		t.Fatalf("kids %v, want %v", kids, want)
	}
	raw, err := set.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	okp, _ := json.Marshal(set.Keys[1])
	x := base64.RawURLEncoding.EncodeToString(a.Ed25519PublicKey())
	if string(okp) != `{"kty":"OKP","crv":"Ed25519","x":"`+x+`","kid":"`+a.Ed25519KeyID()+`","use":"sig"}` {
		t.Fatalf("OKP key %s", okp)
	}
	ec, _ := json.Marshal(set.Keys[0])
	if !bytes.Contains(ec, []byte(`"y":"`)) || !bytes.HasSuffix(ec, []byte(`"use":"sig","alg":"ES256"}`)) {
		t.Fatalf("EC key %s", ec)
	}
	back, err := ParseJWKS(raw)
	if err != nil || !slices.Equal(back.Keys, set.Keys) {
		t.Fatalf("round trip: %v", err)
	}
	if got := back.Ed25519Keys(); len(got) != 3 || !got[2].Equal(old.Ed25519PublicKey()) {
		t.Fatalf("Ed25519Keys: %d", len(got))
	}
	if _, err := back.Key(a.Ed25519KeyID()); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("Key of an Ed25519 kid: %v", err)
	}
	if pks := keys.PublicKeys(); len(pks) != 3 || pks[0] != a.PublicKey() || pks[2] != old.PublicKey() {
		t.Fatalf("PublicKeys %v", pks)
	}
	if len(keys.Signing()) != 2 || len(keys.Published()) != 1 {
		t.Fatal("Signing, Published")
	}
	keys.JWKS().Keys[0].Kid = "changed"
	if keys.JWKS().Keys[0].Kid != a.KeyID() {
		t.Fatal("JWKS shares its slice")
	}
}

// TestParseJWKSKinds: both kinds are read, kinds this package does not use
// are dropped, and a broken key of a known kind spoils the set.
func TestParseJWKSKinds(t *testing.T) {
	g := newGeneration(t)
	ec, ed := g.JWKs()[0], g.JWKs()[1]
	mustJSON := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	rsa := `{"kty":"RSA","n":"AQAB","e":"AQAB","kid":"rsa-1"}`
	x25519 := `{"kty":"OKP","crv":"X25519","x":"` + ed.X + `","kid":"x"}`
	encEd := strings.Replace(mustJSON(ed), `"use":"sig"`, `"use":"enc"`, 1)
	withAlg := ed
	withAlg.Alg = "EdDSA"
	cases := []struct {
		name string
		doc  string
		kids []string // nil: refused with ErrKey
	}{
		{"both kinds", `{"keys":[` + mustJSON(ec) + `,` + mustJSON(ed) + `]}`, []string{ec.Kid, ed.Kid}},
		{"Ed25519 alone", `{"keys":[` + mustJSON(ed) + `]}`, []string{ed.Kid}},
		{"Ed25519 with alg EdDSA", `{"keys":[` + mustJSON(withAlg) + `]}`, []string{ed.Kid}},
		{"RSA and X25519 dropped", `{"keys":[` + rsa + `,` + mustJSON(ec) + `,` + x25519 + `]}`, []string{ec.Kid}},
		{"an encryption key dropped", `{"keys":[` + encEd + `,` + mustJSON(ec) + `]}`, []string{ec.Kid}},
		{"only unknown kinds", `{"keys":[` + rsa + `]}`, nil},
		{"Ed25519 with y", `{"keys":[` + strings.Replace(mustJSON(ed), `"kid"`, `"y":"`+ed.X+`","kid"`, 1) + `]}`, nil},
		{"Ed25519 short x", `{"keys":[` + strings.Replace(mustJSON(ed), ed.X, "AAAA", 1) + `]}`, nil},
		{"Ed25519 padded x", `{"keys":[` + strings.Replace(mustJSON(ed), ed.X, ed.X+"=", 1) + `]}`, nil},
		{"Ed25519 without kid", `{"keys":[` + strings.Replace(mustJSON(ed), `"kid":"`+ed.Kid+`",`, "", 1) + `]}`, nil},
		{"Ed25519 with alg ES256 dropped", `{"keys":[` + strings.Replace(mustJSON(ed), `"use":"sig"`, `"use":"sig","alg":"ES256"`, 1) + `,` + mustJSON(ec) + `]}`, []string{ec.Kid}},
		{"one kid for both kinds", `{"keys":[` + mustJSON(ec) + `,` + strings.Replace(mustJSON(ed), ed.Kid, ec.Kid, 1) + `]}`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set, err := ParseJWKS([]byte(c.doc))
			if c.kids == nil {
				if !errors.Is(err, ErrKey) {
					t.Fatalf("accepted: %v %+v", err, set)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var kids []string
			for _, k := range set.Keys {
				kids = append(kids, k.Kid)
			}
			if !slices.Equal(kids, c.kids) {
				t.Fatalf("kids %v, want %v", kids, c.kids)
			}
		})
	}
}

// TestParseHeaderPairs: the n-th kid goes with the n-th v1, the last pair
// is KeyID/V1, and a header formats back to itself.
func TestParseHeaderPairs(t *testing.T) {
	s1 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x30}, 70))
	s2 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x31}, 70))
	cases := []struct {
		header string
		kids   []string // nil: malformed
	}{
		{"t=1,kid=a,v1=" + s1 + ",kid=b,v1=" + s2, []string{"a", "b"}},
		{"kid=a, kid=b, v1=" + s1 + ", v1=" + s2 + ", t=1", []string{"a", "b"}},
		{"t=1,kid=a,v1=" + s1 + ",kid=b,v1=" + s2 + ",kid=c,v1=" + s1, []string{"a", "b", "c"}},
		{"t=1,kid=a,v1=" + s1 + ",kid=a,v1=" + s2, nil},
		{"t=1,kid=a,v1=" + s1 + ",kid=b", nil},
		{"t=1,kid=a,v1=" + s1 + ",v1=" + s2, nil},
		{"t=1,kid=a,v1=" + s1 + ",kid=b,v1=" + s2 + ",t=2", nil},
	}
	for _, c := range cases {
		s, err := ParseHeader(c.header)
		if c.kids == nil {
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("ParseHeader(%q): %v", c.header, err)
			}
			continue
		}
		if err != nil || !slices.Equal(s.KeyIDs(), c.kids) || s.KeyID != c.kids[len(c.kids)-1] || len(s.More) != len(c.kids)-1 {
			t.Errorf("ParseHeader(%q): %+v %v", c.header, s, err)
			continue
		}
		if want := s1; !bytes.Equal(s.More[0].V1, mustB64(want)) {
			t.Errorf("ParseHeader(%q): the first v1 is not the first pair's", c.header)
		}
		if again, err := ParseHeader(s.String()); err != nil || again.String() != s.String() || !strings.HasPrefix(s.String(), "t=1,kid=a,v1=") {
			t.Errorf("round trip of %q: %q %v", c.header, s.String(), err)
		}
	}
}

func mustB64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// TestKeysSignJWS: the ledger head stays ES256 under the primary's kid.
func TestKeysSignJWS(t *testing.T) {
	a, b := newGeneration(t), newGeneration(t)
	keys := newKeys(t, []*Generation{a, b}, nil)
	jws, err := keys.SignJWS("paywallet-ledger-head", []byte(`{"sequence":1}`))
	if err != nil {
		t.Fatal(err)
	}
	h, payload, err := VerifyJWS(jws, keys.JWKS())
	if err != nil || h.Kid != a.KeyID() || h.Alg != "ES256" || string(payload) != `{"sequence":1}` {
		t.Fatalf("%+v %s %v", h, payload, err)
	}
}

// TestHeadersSet: an outgoing request gets every header that has a value.
func TestHeadersSet(t *testing.T) {
	keys := newKeys(t, []*Generation{newGeneration(t)}, nil)
	hs, err := keys.Sign(hookID, []byte(body), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	hs.Set(h)
	if h.Get("x-service-signature") != hs.Compat || h.Get("service-webhook-signature") != hs.Signature ||
		h.Get("Webhook-Id") != hookID || h.Get(StdTimestampHeader) != hs.StdTimestamp || h.Get(StdSignatureHeader) != hs.StdSignature {
		t.Fatalf("%v", h)
	}
	h = http.Header{}
	Headers{Signature: "t=1"}.Set(h)
	if len(h) != 1 {
		t.Fatalf("empty values set: %v", h)
	}
}

// FuzzParseJWKS: the parser never panics, fails only with ErrKey, keeps
// only valid keys of its two kinds under unique kids, and what it keeps
// marshals to a set that parses to the same keys.
func FuzzParseJWKS(f *testing.F) {
	g, err := GenerateGeneration()
	if err != nil {
		f.Fatal(err)
	}
	keys, _ := NewKeys([]*Generation{g}, nil)
	doc, _ := keys.JWKS().Marshal()
	f.Add(doc)
	f.Add([]byte(`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB","kid":"r"},{"kty":"OKP","crv":"Ed25519","x":"` + g.JWKs()[1].X + `","kid":"k"}]}`))
	f.Add([]byte(`{"keys":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		set, err := ParseJWKS(b)
		if err != nil {
			if !errors.Is(err, ErrKey) {
				t.Fatalf("error %v is not ErrKey", err)
			}
			return
		}
		kids := map[string]bool{}
		for _, k := range set.Keys {
			_, errEC := k.PublicKey()
			_, errEd := k.Ed25519PublicKey()
			if (errEC == nil) == (errEd == nil) || kids[k.Kid] {
				t.Fatalf("kept %+v", k)
			}
			kids[k.Kid] = true
		}
		raw, err := set.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseJWKS(raw)
		if err != nil || !slices.Equal(again.Keys, set.Keys) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
