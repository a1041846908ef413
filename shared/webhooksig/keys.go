package webhooksig

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// Generation is one generation of the service's webhook keys: a P-256 key
// (X-Service-Signature, Service-Webhook-Signature, the ledger head's JWS)
// and an Ed25519 key (Standard Webhooks), made and retired together so
// that one delivery's three signatures always come from one generation.
// Each key has its own kid ([KeyID], [Ed25519KeyID]); the generation is
// named by its P-256 kid. A Generation is immutable.
type Generation struct {
	ec    *Signer
	ed    ed25519.PrivateKey
	edKid string
}

// generationVersion is the first byte of MarshalPrivate's encoding.
const generationVersion = 1

// generationSize is the length of MarshalPrivate's encoding: the version,
// the P-256 scalar and the Ed25519 seed.
const generationSize = 1 + 32 + ed25519.SeedSize

// GenerateGeneration makes a generation of fresh keys.
func GenerateGeneration() (*Generation, error) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return NewGeneration(ec, ed)
}

// NewGeneration makes a generation of existing keys: the service's P-256
// key of before Ed25519 keys joined it keeps its kid, and receivers that
// know it keep working.
func NewGeneration(ec *ecdsa.PrivateKey, ed ed25519.PrivateKey) (*Generation, error) {
	s, err := NewSigner(ec)
	if err != nil {
		return nil, err
	}
	if len(ed) != ed25519.PrivateKeySize {
		return nil, errorf(ErrKey, "not an Ed25519 private key")
	}
	ed = append(ed25519.PrivateKey(nil), ed...)
	return &Generation{ec: s, ed: ed, edKid: Ed25519KeyID(ed.Public().(ed25519.PublicKey))}, nil
}

// MarshalPrivate encodes the generation's private keys, 65 bytes: a
// version byte (1), the P-256 scalar (32 bytes, big-endian) and the
// Ed25519 seed (32 bytes). The kids and public keys follow from them. The
// bytes are the secret itself: seal them before they are stored, and
// clear them after.
func (g *Generation) MarshalPrivate() ([]byte, error) {
	d, err := g.ec.key.Bytes()
	if err != nil {
		return nil, err
	}
	defer clear(d)
	b := make([]byte, 0, generationSize)
	b = append(b, generationVersion)
	b = append(b, d...)
	return append(b, g.ed.Seed()...), nil
}

// ParseGeneration restores a generation from MarshalPrivate's bytes. It
// does not keep b; the caller may clear it.
func ParseGeneration(b []byte) (*Generation, error) {
	if len(b) != generationSize || b[0] != generationVersion {
		return nil, errorf(ErrKey, "a key generation is "+strconv.Itoa(generationSize)+" bytes of version 1")
	}
	ec, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), b[1:33])
	if err != nil {
		return nil, errorf(ErrKey, "the P-256 scalar is not a private key")
	}
	return NewGeneration(ec, ed25519.NewKeyFromSeed(b[33:]))
}

// KeyID is the P-256 key's kid, which also names the generation.
func (g *Generation) KeyID() string { return g.ec.kid }

// Ed25519KeyID is the Ed25519 key's kid in the JWKS.
func (g *Generation) Ed25519KeyID() string { return g.edKid }

// Signer is the P-256 key as a one-key signer (SignJWS, or a Sign without
// the Standard Webhooks headers).
func (g *Generation) Signer() *Signer { return g.ec }

// Ed25519PublicKey is the Standard Webhooks key.
func (g *Generation) Ed25519PublicKey() ed25519.PublicKey {
	return g.ed.Public().(ed25519.PublicKey)
}

// PublicKey is the Standard Webhooks public key in the spec's form,
// whpk_<base64>, to show receivers that configure keys by hand.
func (g *Generation) PublicKey() string { return StandardPublicKey(g.Ed25519PublicKey()) }

// JWKs are the generation's two public keys as published: the P-256 key,
// then the Ed25519 key.
func (g *Generation) JWKs() []JWK {
	return []JWK{g.ec.JWK(), NewEd25519JWK(g.Ed25519PublicKey())}
}

// Keys is the service's webhook key set during and between rotations:
// generations that sign, oldest first, and generations that are published
// without signing (announced before they sign, or kept for a while after
// they stopped so that deliveries signed just before still verify).
//
// The oldest signing generation is the primary: it alone makes
// X-Service-Signature (one signature, which receivers check against the
// key they already know) and the ledger head's JWS. Every signing
// generation signs the replay-safe headers:
//
//   - Service-Webhook-Signature: t=…, then kid=…,v1=… per generation,
//     newest first, the primary last. With one generation it is the one-key
//     header of before, t=…,kid=…,v1=…. A verifier written from the
//     README's standard-library sample, which keeps the last kid and the
//     last v1 it reads, checks the primary's pair: the key it already knows.
//     [ParseHeader] of before this set existed refuses a header with two
//     pairs ("kid twice"), so receivers built on it must update before a
//     second generation signs.
//   - webhook-signature: one v1a entry per generation, in the same order.
//
// A Keys is immutable and safe for concurrent use; the service builds a
// new one when a rotation step happens and swaps it in.
type Keys struct {
	signing   []*Generation // oldest first; signing[0] is the primary
	published []*Generation
	jwks      JWKS
}

// maxSigning bounds the signing generations, so that the headers stay
// well under what receivers parse (maxHeader).
const maxSigning = 4

// NewKeys makes a key set: signing (oldest first, at least one, at most
// four) sign every delivery; published are only published. A generation
// may appear once.
func NewKeys(signing, published []*Generation) (*Keys, error) {
	if len(signing) == 0 || len(signing) > maxSigning {
		return nil, errorf(ErrKey, "between 1 and "+strconv.Itoa(maxSigning)+" generations sign")
	}
	k := &Keys{signing: append([]*Generation(nil), signing...), published: append([]*Generation(nil), published...)}
	seen := map[string]bool{}
	for _, g := range append(append([]*Generation(nil), signing...), published...) {
		if g == nil {
			return nil, errorf(ErrKey, "a nil generation")
		}
		if seen[g.KeyID()] || seen[g.Ed25519KeyID()] {
			return nil, errorf(ErrKey, "generation "+g.KeyID()+" appears twice")
		}
		seen[g.KeyID()], seen[g.Ed25519KeyID()] = true, true
		k.jwks.Keys = append(k.jwks.Keys, g.JWKs()...)
	}
	return k, nil
}

// Primary is the oldest signing generation.
func (k *Keys) Primary() *Generation { return k.signing[0] }

// Signing lists the signing generations, oldest first.
func (k *Keys) Signing() []*Generation { return append([]*Generation(nil), k.signing...) }

// Published lists the generations published without signing.
func (k *Keys) Published() []*Generation { return append([]*Generation(nil), k.published...) }

// JWKS is the public key set (GET …/webhooks/jwks.json): both keys of
// every signing generation, oldest first, then of every published one.
func (k *Keys) JWKS() JWKS { return JWKS{Keys: append([]JWK(nil), k.jwks.Keys...)} }

// PublicKeys are the whpk_ keys of every generation of JWKS, in its order.
func (k *Keys) PublicKeys() []string {
	var out []string
	for _, g := range append(k.Signing(), k.published...) {
		out = append(out, g.PublicKey())
	}
	return out
}

// SignJWS signs a document with the primary's P-256 key (ES256).
func (k *Keys) SignJWS(typ string, payload []byte) (string, error) {
	return k.Primary().Signer().SignJWS(typ, payload)
}

// Sign signs one delivery of the webhook with the given id (its body's
// "id") and raw body, at time now, with every signing generation, and
// returns the values of all five headers. The id must suit the Standard
// Webhooks headers: visible ASCII without '.', at most 256 bytes.
func (k *Keys) Sign(id string, body []byte, now time.Time) (Headers, error) {
	if !validStdID(id) {
		return Headers{}, errorf(ErrMalformed, "a webhook-id is 1 to 256 visible ASCII characters other than '.'")
	}
	t := now.Unix()
	signed := SignedBytes(id, t, body)
	digest := sha256.Sum256(signed)
	primary := k.Primary().ec
	bodyDigest := sha256.Sum256(body)
	compat, err := sign256(primary.key, bodyDigest[:])
	if err != nil {
		return Headers{}, err
	}
	c, err := json.Marshal(compatValue{V: "1", S: base64.StdEncoding.EncodeToString(compat)})
	if err != nil {
		return Headers{}, err
	}
	h := Headers{Compat: string(c), StdID: id, StdTimestamp: strconv.FormatInt(t, 10)}
	sig := Signature{Timestamp: t}
	for i := len(k.signing) - 1; i >= 0; i-- {
		g := k.signing[i]
		v1, err := sign256(g.ec.key, digest[:])
		if err != nil {
			return Headers{}, err
		}
		if i == 0 {
			sig.KeyID, sig.V1 = g.ec.kid, v1
		} else {
			sig.More = append(sig.More, KeyedSig{KeyID: g.ec.kid, V1: v1})
		}
		entry := signStandard(g.ed, signed)
		if h.StdSignature != "" {
			h.StdSignature += " "
		}
		h.StdSignature += entry
	}
	h.Signature = sig.String()
	return h, nil
}

// Set sets the headers that have a value on an outgoing request's h.
func (hs Headers) Set(h http.Header) {
	for _, f := range []struct{ name, value string }{
		{CompatHeader, hs.Compat},
		{Header, hs.Signature},
		{StdIDHeader, hs.StdID},
		{StdTimestampHeader, hs.StdTimestamp},
		{StdSignatureHeader, hs.StdSignature},
	} {
		if f.value != "" {
			h.Set(f.name, f.value)
		}
	}
}
