package walletcrypto

import (
	"crypto/subtle"
	"encoding/hex"
)

// A PublicKey is a P-256 point, whatever encoding it was parsed from.
// It is immutable and safe for concurrent use.
type PublicKey struct {
	_ [0]func() // not comparable: use Equal

	raw [65]byte // uncompressed SEC 1: 04 || X || Y

	// nativePublic holds the standard library's parsed forms on the host
	// (keys_native.go); in the wasm build, where WebCrypto does the curve
	// work, it is empty (keys_js.go).
	nativePublic
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
	native, err := parseNativePublic(b)
	if err != nil {
		return nil, wrap(ErrInvalidPublicKey, "not a point on P-256")
	}
	p := &PublicKey{nativePublic: native}
	copy(p.raw[:], b)
	return p, nil
}

// ParsePublicKeyHex parses the hex form of a SEC 1 point: 66 characters
// (compressed) or 130 (uncompressed), upper or lower case.
func ParsePublicKeyHex(s string) (*PublicKey, error) {
	if len(s) != 66 && len(s) != 130 {
		return nil, wrap(ErrInvalidPublicKey, "hex must be 66 or 130 characters")
	}
	b, err := decodeHex(s)
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
