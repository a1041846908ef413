package walletcrypto

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hpke"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
)

// A PrivateKey is a P-256 private key: API key, session key, or HPKE receiver key.
//
// It holds the scalar once in each form the standard library needs (ECDSA for
// stamps, ECDH/HPKE for bundles), parsed once at construction. Its zero value is
// not usable; get one from [GenerateKey] or [NewPrivateKey]. A PrivateKey may be
// used from several goroutines, but not while [PrivateKey.Wipe] runs.
type PrivateKey struct {
	_ [0]func() // not comparable: use Bytes and crypto/subtle if you must

	scalar []byte // 32 bytes, big-endian; nil once wiped
	ecdsa  *ecdsa.PrivateKey
	hpke   hpke.PrivateKey
	pub    *PublicKey
}

// GenerateKey returns a new random P-256 private key.
func GenerateKey() (*PrivateKey, error) {
	// The key is drawn by crypto/ecdh rather than ecdsa.GenerateKey: the same
	// uniform scalar from crypto/rand (the reader is ignored since Go 1.26),
	// while ecdsa.GenerateKey and ecdsa.PrivateKey.Bytes would link their
	// code for all four NIST curves into the wasm module.
	dh, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, internal("key generation", err)
	}
	scalar := dh.Bytes()
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), scalar)
	if err != nil {
		return nil, internal("key generation", err)
	}
	return newPrivateKey(k, dh, scalar)
}

// NewPrivateKey returns the private key with the given scalar: exactly 32 bytes,
// big-endian, with 0 < d < n. The slice is copied.
func NewPrivateKey(scalar []byte) (*PrivateKey, error) {
	if len(scalar) != 32 {
		return nil, wrap(ErrInvalidPrivateKey, "scalar must be 32 bytes")
	}
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), scalar)
	if err != nil {
		return nil, wrap(ErrInvalidPrivateKey, "scalar out of range")
	}
	dh, err := ecdh.P256().NewPrivateKey(scalar)
	if err != nil {
		return nil, wrap(ErrInvalidPrivateKey, "scalar out of range")
	}
	return newPrivateKey(k, dh, append([]byte(nil), scalar...))
}

// newPrivateKey joins the ECDSA and ECDH forms of one scalar and adds the
// HPKE view. It takes ownership of scalar.
func newPrivateKey(k *ecdsa.PrivateKey, dh *ecdh.PrivateKey, scalar []byte) (*PrivateKey, error) {
	hk, err := hpke.NewDHKEMPrivateKey(dh)
	if err != nil {
		return nil, internal("hpke private key", err)
	}
	// Copy the public half so that the public key does not keep the ecdsa private
	// key (and the standard library's cached copy of the scalar) reachable.
	ecdsaPub := k.PublicKey
	pub := &PublicKey{ecdsa: &ecdsaPub, ecdh: dh.PublicKey()}
	copy(pub.raw[:], dh.PublicKey().Bytes())
	return &PrivateKey{scalar: scalar, ecdsa: k, hpke: hk, pub: pub}, nil
}

// Bytes returns a copy of the 32-byte big-endian scalar, or nil if the key was wiped.
// The caller should overwrite the copy when done with it.
func (k *PrivateKey) Bytes() []byte {
	if k.scalar == nil {
		return nil
	}
	return append([]byte(nil), k.scalar...)
}

// PublicKey returns the public key of k. It remains usable after [PrivateKey.Wipe].
func (k *PrivateKey) PublicKey() *PublicKey { return k.pub }

// Wipe overwrites the copies of the scalar this package holds and makes k unusable:
// signing, opening and [PrivateKey.Bytes] fail afterwards. Copies held inside the
// standard library (its ECDH key and signing cache) cannot be reached and are left
// to the garbage collector.
func (k *PrivateKey) Wipe() {
	clear(k.scalar)
	k.scalar = nil
	if k.ecdsa != nil && k.ecdsa.D != nil {
		clear(k.ecdsa.D.Bits())
		k.ecdsa.D.SetInt64(0)
	}
	k.ecdsa = nil
	k.hpke = nil
}

// String describes k by its public key, never printing the scalar.
func (k *PrivateKey) String() string {
	if k == nil || k.pub == nil {
		return "walletcrypto.PrivateKey(nil)"
	}
	return "walletcrypto.PrivateKey(" + k.pub.CompressedHex() + ")"
}

// GoString is String, so that %#v does not print the scalar either.
func (k *PrivateKey) GoString() string { return k.String() }

// usable reports whether k can still sign and decrypt.
func (k *PrivateKey) usable() bool { return k != nil && k.scalar != nil }

// A PublicKey is a P-256 point, whatever encoding it was parsed from.
// It is immutable and safe for concurrent use.
type PublicKey struct {
	_ [0]func() // not comparable: use Equal

	raw   [65]byte // uncompressed SEC 1: 04 || X || Y
	ecdsa *ecdsa.PublicKey
	ecdh  *ecdh.PublicKey
}

// ParsePublicKey parses a SEC 1 point: 33 bytes compressed (02/03 || X) or
// 65 bytes uncompressed (04 || X || Y). It refuses other lengths and prefixes,
// coordinates not below p, points not on the curve, and the identity.
func ParsePublicKey(sec1 []byte) (*PublicKey, error) {
	switch {
	case len(sec1) == 65 && sec1[0] == 4:
		return parseUncompressed(sec1)
	case len(sec1) == 33 && (sec1[0] == 2 || sec1[0] == 3):
		u, err := decompress(sec1)
		if err != nil {
			return nil, err
		}
		return parseUncompressed(u)
	case len(sec1) == 33 || len(sec1) == 65:
		return nil, wrap(ErrInvalidPublicKey, "wrong prefix for its length")
	default:
		return nil, wrap(ErrInvalidPublicKey, "must be 33 or 65 bytes")
	}
}

func parseUncompressed(b []byte) (*PublicKey, error) {
	dh, err := ecdh.P256().NewPublicKey(b)
	if err != nil {
		return nil, wrap(ErrInvalidPublicKey, "not a point on P-256")
	}
	ek, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), b)
	if err != nil {
		return nil, wrap(ErrInvalidPublicKey, "not a point on P-256")
	}
	p := &PublicKey{ecdsa: ek, ecdh: dh}
	copy(p.raw[:], b)
	return p, nil
}

// ParsePublicKeyHex parses the hex form of a SEC 1 point: 66 characters
// (compressed) or 130 (uncompressed), upper or lower case.
func ParsePublicKeyHex(s string) (*PublicKey, error) {
	if len(s) != 66 && len(s) != 130 {
		return nil, wrap(ErrInvalidPublicKey, "hex must be 66 or 130 characters")
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, wrap(ErrInvalidPublicKey, "bad hex")
	}
	return ParsePublicKey(b)
}

// ParseClientPublicKey parses a clientPublicKey as the spec writes it:
// ^04[0-9a-fA-F]{128}$ (uncompressed: the service seals a session key to it) or
// ^0[23][0-9a-fA-F]{64}$ (compressed: the key itself becomes the session key;
// see [IsUncompressedHex]). The point must also be valid.
func ParseClientPublicKey(s string) (*PublicKey, error) {
	p, err := ParsePublicKeyHex(s)
	if err != nil {
		return nil, wrapCause(ErrInvalidPublicKey, "clientPublicKey must match ^04[0-9a-fA-F]{128}$ or ^0[23][0-9a-fA-F]{64}$ and be a P-256 point", err)
	}
	return p, nil
}

// IsUncompressedHex reports whether s matches ^04[0-9a-fA-F]{128}$, the form of
// clientPublicKey that selects the legacy HPKE-delivered session key. It checks
// the syntax only, not that the point is on the curve.
func IsUncompressedHex(s string) bool {
	if len(s) != 130 || s[0] != '0' || s[1] != '4' {
		return false
	}
	for i := 2; i < len(s); i++ {
		if !isHexDigit(s[i]) {
			return false
		}
	}
	return true
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// Compressed returns the 33-byte SEC 1 compressed encoding: 02/03 || X.
func (p *PublicKey) Compressed() []byte {
	c := make([]byte, 33)
	c[0] = 2 | p.raw[64]&1
	copy(c[1:], p.raw[1:33])
	return c
}

// Uncompressed returns the 65-byte SEC 1 uncompressed encoding: 04 || X || Y.
func (p *PublicKey) Uncompressed() []byte { return append([]byte(nil), p.raw[:]...) }

// CompressedHex returns the compressed encoding in lower-case hex (66 characters),
// the form used in stamps.
func (p *PublicKey) CompressedHex() string { return hex.EncodeToString(p.Compressed()) }

// UncompressedHex returns the uncompressed encoding in lower-case hex (130 characters),
// the form used for HPKE receivers and enclave keys.
func (p *PublicKey) UncompressedHex() string { return hex.EncodeToString(p.raw[:]) }

// String returns [PublicKey.CompressedHex].
func (p *PublicKey) String() string { return p.CompressedHex() }

// Equal reports whether p and q are the same point. Two nil keys are equal.
func (p *PublicKey) Equal(q *PublicKey) bool {
	if p == nil || q == nil {
		return p == q
	}
	return subtle.ConstantTimeCompare(p.raw[:], q.raw[:]) == 1
}
