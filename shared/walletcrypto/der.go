package walletcrypto

import (
	"bytes"
	"math/big"
)

// ECDSA signatures travel as ASN.1 DER (SEC 1 §C.8, X.690):
//
//	30 len 02 lenR R 02 lenS S
//
// This file accepts DER in its one canonical form only, which is what JavaScript's
// fromDerSignature, WebCrypto-converted stamps, OpenSSL, noble and Go all produce.

// ParseDERSignature parses a DER ECDSA P-256 signature strictly: SEQUENCE of two
// INTEGERs, short-form lengths, minimal non-negative integers (a leading zero byte
// only before a byte ≥ 0x80), nothing trailing, and 0 < r, s < n. Anything it
// accepts re-encodes to the same bytes with [EncodeDERSignature]. High S is accepted.
func ParseDERSignature(der []byte) (r, s *big.Int, err error) {
	rs, err := parseDER(der)
	if err != nil {
		return nil, nil, err
	}
	return new(big.Int).SetBytes(rs[:32]), new(big.Int).SetBytes(rs[32:]), nil
}

// parseDER is [ParseDERSignature] on bytes: it returns r || s, 32 bytes
// each. The package's own parsers call it rather than ParseDERSignature so
// that the wasm module, which only checks and converts signatures, does not
// link math/big.
func parseDER(der []byte) ([64]byte, error) {
	var rs [64]byte
	if len(der) < 8 || der[0] != 0x30 {
		return rs, malformed("der: not a SEQUENCE")
	}
	if der[1] >= 0x80 || int(der[1]) != len(der)-2 {
		return rs, malformed("der: bad SEQUENCE length")
	}
	rest, err := derInteger(der[2:], rs[:32])
	if err != nil {
		return rs, err
	}
	rest, err = derInteger(rest, rs[32:])
	if err != nil {
		return rs, err
	}
	if len(rest) != 0 {
		return rs, malformed("der: data after the integers")
	}
	return rs, nil
}

// derInteger reads one INTEGER in [1, n-1] from the front of b into out (32
// bytes, big-endian) and returns what follows it.
func derInteger(b, out []byte) ([]byte, error) {
	if len(b) < 3 || b[0] != 0x02 {
		return nil, malformed("der: expected an INTEGER")
	}
	n := int(b[1])
	if n == 0 || n > 33 || n > len(b)-2 {
		return nil, malformed("der: bad INTEGER length")
	}
	v := b[2 : 2+n]
	if v[0]&0x80 != 0 {
		return nil, malformed("der: negative INTEGER")
	}
	if n > 1 && v[0] == 0 && v[1]&0x80 == 0 {
		return nil, malformed("der: INTEGER not minimally encoded")
	}
	if n == 33 {
		if v[0] != 0 {
			return nil, malformed("der: INTEGER out of range") // at least 2^256
		}
		v = v[1:] // the zero before a high bit
	}
	copy(out[32-len(v):], v)
	if !scalarBytesInRange(out) {
		return nil, malformed("der: INTEGER out of range")
	}
	return b[2+n:], nil
}

// EncodeDERSignature encodes r and s, each in [1, n-1], as a minimal DER signature.
func EncodeDERSignature(r, s *big.Int) ([]byte, error) {
	if !inScalarRange(r) || !inScalarRange(s) {
		return nil, malformed("der: r and s must be in [1, n-1]")
	}
	rb, sb := derIntegerBytes(r), derIntegerBytes(s)
	out := make([]byte, 0, 6+len(rb)+len(sb))
	out = append(out, 0x30, byte(4+len(rb)+len(sb)))
	out = append(out, 0x02, byte(len(rb)))
	out = append(out, rb...)
	out = append(out, 0x02, byte(len(sb)))
	return append(out, sb...), nil
}

func inScalarRange(x *big.Int) bool {
	return x != nil && x.Sign() > 0 && x.BitLen() <= 256 && scalarBytesInRange(x.FillBytes(make([]byte, 32)))
}

// derIntegerBytes returns the content octets of a positive INTEGER.
func derIntegerBytes(x *big.Int) []byte {
	b := x.Bytes()
	if b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	return b
}

// DERFromP1363 turns a raw IEEE P1363 signature, r || s with 32 bytes each
// (WebCrypto's ECDSA output), into minimal DER. r and s must be in [1, n-1].
// It works on the bytes alone (no math/big): the wasm module calls it for
// every stamp.
func DERFromP1363(rs []byte) ([]byte, error) {
	if len(rs) != 64 {
		return nil, malformed("p1363: signature must be 64 bytes")
	}
	r, s := rs[:32], rs[32:]
	if !scalarBytesInRange(r) || !scalarBytesInRange(s) {
		return nil, malformed("der: r and s must be in [1, n-1]")
	}
	r, s = derContent(r), derContent(s)
	out := make([]byte, 0, 6+len(r)+len(s))
	out = append(out, 0x30, byte(4+len(r)+len(s)))
	out = append(out, 0x02, byte(len(r)))
	out = append(out, r...)
	out = append(out, 0x02, byte(len(s)))
	return append(out, s...), nil
}

// P1363FromDER turns a strict DER signature (see [ParseDERSignature]) into
// r || s, 32 bytes each, the form WebCrypto verifies.
func P1363FromDER(der []byte) ([]byte, error) {
	rs, err := parseDER(der)
	if err != nil {
		return nil, err
	}
	return rs[:], nil
}

// scalarBytesInRange reports whether the 32-byte big-endian b is in [1, n-1].
func scalarBytesInRange(b []byte) bool {
	zero := true
	for _, c := range b {
		zero = zero && c == 0
	}
	return !zero && bytes.Compare(b, curveNBytes[:]) < 0
}

// derContent returns the content octets of the positive INTEGER whose
// 32-byte big-endian value is b: leading zeros dropped, one zero put back
// before a high bit.
func derContent(b []byte) []byte {
	for len(b) > 1 && b[0] == 0 {
		b = b[1:]
	}
	if b[0]&0x80 != 0 {
		return append([]byte{0}, b...)
	}
	return b
}
