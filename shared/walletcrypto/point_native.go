//go:build !js

package walletcrypto

import "crypto/elliptic"

// decompress turns a 33-byte compressed point (02/03 || X) into its 65-byte
// uncompressed form (SEC 1 §2.3.4). It refuses x ≥ p and an x for which
// x³ − 3x + b is not a square. The caller has checked the length and prefix.
//
// crypto/elliptic does the square root in constant time with the standard
// library's P-256 field code, about 2.5 times faster than math/big's Exp;
// the wasm build uses [decompressPoint], and the tests check the two agree.
func decompress(c []byte) ([]byte, error) {
	x, y := elliptic.UnmarshalCompressed(elliptic.P256(), c)
	if x == nil {
		return nil, wrap(ErrInvalidPublicKey, "x is not below p or not the coordinate of a point on P-256")
	}
	u := make([]byte, 65)
	u[0] = 4
	x.FillBytes(u[1:33])
	y.FillBytes(u[33:])
	return u, nil
}
