package walletcrypto

import "math/big"

// The P-256 domain parameters this package needs itself (FIPS 186-5, SEC 2),
// written out so that the wasm build does not link crypto/elliptic for them.
var (
	// curveP is the field prime p = 2^256 − 2^224 + 2^192 + 2^96 − 1.
	curveP = mustBig("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff")
	// curveB is the coefficient b of y² = x³ − 3x + b.
	curveB = mustBig("5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b")
	// curveN is the order of the base point.
	curveN = mustBig("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")
	// sqrtExp is (p+1)/4: since p ≡ 3 (mod 4), a^sqrtExp is a square root of
	// a whenever a is a quadratic residue.
	sqrtExp = new(big.Int).Rsh(new(big.Int).Add(curveP, big.NewInt(1)), 2)
)

func mustBig(h string) *big.Int {
	x, ok := new(big.Int).SetString(h, 16)
	if !ok {
		panic("walletcrypto: bad constant " + h)
	}
	return x
}

// curveRHS returns x³ − 3x + b mod p.
func curveRHS(x *big.Int) *big.Int {
	rhs := new(big.Int).Mul(x, x)
	rhs.Sub(rhs, big.NewInt(3))
	rhs.Mul(rhs, x)
	rhs.Add(rhs, curveB)
	return rhs.Mod(rhs, curveP)
}

// onCurveBig reports whether u (65 bytes, 04 || X || Y) is a point of P-256:
// both coordinates below p and y² = x³ − 3x + b (mod p). The identity has no
// such encoding, so it is refused too. It handles public values only, so
// math/big's variable time does not matter; the wasm build checks points
// with it, the host build with crypto/ecdh (and tests the two agree).
func onCurveBig(u []byte) bool {
	if len(u) != 65 || u[0] != 4 {
		return false
	}
	x := new(big.Int).SetBytes(u[1:33])
	y := new(big.Int).SetBytes(u[33:])
	if x.Cmp(curveP) >= 0 || y.Cmp(curveP) >= 0 {
		return false
	}
	y2 := new(big.Int).Mul(y, y)
	return y2.Mod(y2, curveP).Cmp(curveRHS(x)) == 0
}

// decompressBig turns a 33-byte compressed point (02/03 || X) into its
// 65-byte uncompressed form (SEC 1 §2.3.4), as the JS SDK does (math.ts
// modSqrt): y = (x³ − 3x + b)^((p+1)/4) mod p, checked by squaring, with the
// parity of the prefix. It refuses x ≥ p and an x for which x³ − 3x + b is
// not a square. The caller has checked the length and prefix.
func decompressBig(c []byte) ([]byte, error) {
	x := new(big.Int).SetBytes(c[1:33])
	if x.Cmp(curveP) >= 0 {
		return nil, wrap(ErrInvalidPublicKey, "x is not below p")
	}
	rhs := curveRHS(x)
	y := new(big.Int).Exp(rhs, sqrtExp, curveP)
	if sq := new(big.Int).Mul(y, y); sq.Mod(sq, curveP).Cmp(rhs) != 0 {
		return nil, wrap(ErrInvalidPublicKey, "x is not the coordinate of a point on P-256")
	}
	if y.Bit(0) != uint(c[0]&1) {
		y.Sub(curveP, y)
	}
	u := make([]byte, 65)
	u[0] = 4
	x.FillBytes(u[1:33])
	y.FillBytes(u[33:])
	return u, nil
}
