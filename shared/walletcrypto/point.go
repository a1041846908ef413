package walletcrypto

import (
	"encoding/binary"
	"math/bits"
)

// This file is the little P-256 field arithmetic the wasm build needs for
// public points: the on-curve check of an uncompressed point and the
// decompression of a compressed one. It works on four 64-bit limbs rather
// than math/big, which would bring about 140 KB of code into the module
// (plus fmt, through its string scanning) and parse its constants in an
// init function that runs before the module is ready. It handles public
// values only, so it is variable-time; the host build does the same with
// crypto/ecdh and crypto/elliptic, and the tests check that the two agree
// and that both agree with math/big.

// fe is an element of GF(p), little-endian 64-bit limbs, in the Montgomery
// domain (a·2²⁵⁶ mod p) unless a comment says otherwise.
type fe [4]uint64

// The P-256 domain parameters this package needs itself (FIPS 186-5, SEC 2),
// written out so that the wasm build links neither crypto/elliptic nor
// math/big for them. TestCurveConstants checks them against crypto/elliptic.
var (
	// feP is the field prime p = 2^256 − 2^224 + 2^192 + 2^96 − 1 (plain).
	feP = fe{0xffffffffffffffff, 0x00000000ffffffff, 0x0000000000000000, 0xffffffff00000001}
	// feRR is 2^512 mod p: montMul(x, feRR) brings x into the Montgomery domain.
	feRR = fe{0x0000000000000003, 0xfffffffbffffffff, 0xfffffffffffffffe, 0x00000004fffffffd}
	// feBBytes is the coefficient b of y² = x³ − 3x + b, big-endian.
	feBBytes = [32]byte{
		0x5a, 0xc6, 0x35, 0xd8, 0xaa, 0x3a, 0x93, 0xe7, 0xb3, 0xeb, 0xbd, 0x55, 0x76, 0x98, 0x86, 0xbc,
		0x65, 0x1d, 0x06, 0xb0, 0xcc, 0x53, 0xb0, 0xf6, 0x3b, 0xce, 0x3c, 0x3e, 0x27, 0xd2, 0x60, 0x4b,
	}
	// feSqrtExp is (p+1)/4 (plain).
	feSqrtExp = fe{0x0000000000000000, 0x0000000040000000, 0x4000000000000000, 0x3fffffffc0000000}
	// curveNBytes is the order n of the base point, big-endian.
	curveNBytes = [32]byte{
		0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51,
	}
)

// feFromBytes reads a 32-byte big-endian integer (plain, not Montgomery) and
// reports whether it is below p.
func feFromBytes(b []byte) (fe, bool) {
	x := fe{
		binary.BigEndian.Uint64(b[24:32]),
		binary.BigEndian.Uint64(b[16:24]),
		binary.BigEndian.Uint64(b[8:16]),
		binary.BigEndian.Uint64(b[0:8]),
	}
	_, borrow := feSubRaw(x, feP)
	return x, borrow == 1
}

// putBytes writes the plain integer x as 32 big-endian bytes.
func (x fe) putBytes(b []byte) {
	binary.BigEndian.PutUint64(b[0:8], x[3])
	binary.BigEndian.PutUint64(b[8:16], x[2])
	binary.BigEndian.PutUint64(b[16:24], x[1])
	binary.BigEndian.PutUint64(b[24:32], x[0])
}

// feSubRaw returns a − b mod 2^256 and the borrow.
func feSubRaw(a, b fe) (fe, uint64) {
	var r fe
	var borrow uint64
	r[0], borrow = bits.Sub64(a[0], b[0], 0)
	r[1], borrow = bits.Sub64(a[1], b[1], borrow)
	r[2], borrow = bits.Sub64(a[2], b[2], borrow)
	r[3], borrow = bits.Sub64(a[3], b[3], borrow)
	return r, borrow
}

// feAdd returns a + b mod p, for a, b < p.
func feAdd(a, b fe) fe {
	var r fe
	var carry uint64
	r[0], carry = bits.Add64(a[0], b[0], 0)
	r[1], carry = bits.Add64(a[1], b[1], carry)
	r[2], carry = bits.Add64(a[2], b[2], carry)
	r[3], carry = bits.Add64(a[3], b[3], carry)
	if s, borrow := feSubRaw(r, feP); carry == 1 || borrow == 0 {
		return s
	}
	return r
}

// feSub returns a − b mod p, for a, b < p.
func feSub(a, b fe) fe {
	r, borrow := feSubRaw(a, b)
	if borrow == 1 {
		var carry uint64
		r[0], carry = bits.Add64(r[0], feP[0], 0)
		r[1], carry = bits.Add64(r[1], feP[1], carry)
		r[2], carry = bits.Add64(r[2], feP[2], carry)
		r[3], _ = bits.Add64(r[3], feP[3], carry)
	}
	return r
}

// montMul returns a·b·2⁻²⁵⁶ mod p, for a, b < p (CIOS Montgomery
// multiplication). Since p ≡ −1 (mod 2⁶⁴), −p⁻¹ mod 2⁶⁴ is 1 and each
// round's multiple of p is simply the low limb.
func montMul(a, b fe) fe {
	var t [6]uint64
	for i := range 4 {
		var c uint64
		for j := range 4 {
			hi, lo := bits.Mul64(a[j], b[i])
			var k uint64
			lo, k = bits.Add64(lo, t[j], 0)
			hi += k
			lo, k = bits.Add64(lo, c, 0)
			hi += k
			t[j], c = lo, hi
		}
		var k uint64
		t[4], k = bits.Add64(t[4], c, 0)
		t[5] = k

		m := t[0]
		hi, lo := bits.Mul64(m, feP[0])
		_, k = bits.Add64(lo, t[0], 0)
		c = hi + k
		for j := 1; j < 4; j++ {
			hi, lo := bits.Mul64(m, feP[j])
			lo, k = bits.Add64(lo, t[j], 0)
			hi += k
			lo, k = bits.Add64(lo, c, 0)
			hi += k
			t[j-1], c = lo, hi
		}
		t[3], k = bits.Add64(t[4], c, 0)
		t[4] = t[5] + k
	}
	r := fe{t[0], t[1], t[2], t[3]}
	if s, borrow := feSubRaw(r, feP); t[4] != 0 || borrow == 0 {
		return s
	}
	return r
}

// toMont and fromMont move a plain value in [0, p) into and out of the
// Montgomery domain.
func toMont(x fe) fe   { return montMul(x, feRR) }
func fromMont(x fe) fe { return montMul(x, fe{1}) }

// curveRHS returns x³ − 3x + b for x in the Montgomery domain.
func curveRHS(x fe) fe {
	b, _ := feFromBytes(feBBytes[:])
	x3 := montMul(montMul(x, x), x)
	threeX := feAdd(feAdd(x, x), x)
	return feAdd(feSub(x3, threeX), toMont(b))
}

// feSqrtCandidate returns a^((p+1)/4) for a in the Montgomery domain: since
// p ≡ 3 (mod 4) it is a square root of a whenever a is a square. The
// exponent (p+1)/4 = 2^254 − 2^222 + 2^190 + 2^94 is a sum of powers of two
// whose runs of ones are short, so plain square-and-multiply over its bits
// is enough for public inputs.
func feSqrtCandidate(a fe) fe {
	e := feSqrtExp
	one := toMont(fe{1})
	r := one
	for i := 255; i >= 0; i-- {
		r = montMul(r, r)
		if e[i/64]>>(i%64)&1 == 1 {
			r = montMul(r, a)
		}
	}
	return r
}

// onCurve reports whether u (65 bytes, 04 || X || Y) is a point of P-256:
// both coordinates below p and y² = x³ − 3x + b (mod p). The identity has no
// such encoding, so it is refused too.
func onCurve(u []byte) bool {
	if len(u) != 65 || u[0] != 4 {
		return false
	}
	x, okX := feFromBytes(u[1:33])
	y, okY := feFromBytes(u[33:65])
	if !okX || !okY {
		return false
	}
	xm, ym := toMont(x), toMont(y)
	return montMul(ym, ym) == curveRHS(xm)
}

// decompressPoint turns a 33-byte compressed point (02/03 || X) into its
// 65-byte uncompressed form (SEC 1 §2.3.4), as the JS SDK does (math.ts
// modSqrt): y = (x³ − 3x + b)^((p+1)/4) mod p, checked by squaring, with the
// parity of the prefix. It refuses x ≥ p and an x for which x³ − 3x + b is
// not a square. The caller has checked the length and prefix.
func decompressPoint(c []byte) ([]byte, error) {
	x, ok := feFromBytes(c[1:33])
	if !ok {
		return nil, wrap(ErrInvalidPublicKey, "x is not below p")
	}
	rhs := curveRHS(toMont(x))
	ym := feSqrtCandidate(rhs)
	if montMul(ym, ym) != rhs {
		return nil, wrap(ErrInvalidPublicKey, "x is not the coordinate of a point on P-256")
	}
	y := fromMont(ym)
	if y[0]&1 != uint64(c[0]&1) {
		y = feSub(fe{}, y)
	}
	u := make([]byte, 65)
	u[0] = 4
	copy(u[1:33], c[1:33])
	y.putBytes(u[33:])
	return u, nil
}
