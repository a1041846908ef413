//go:build !js

package walletcrypto

import (
	"bytes"
	"crypto/ecdh"
	"crypto/elliptic"
	"math/big"
	"testing"
)

// The P-256 domain parameters as math/big values, for the oracles.
var (
	curveP  = elliptic.P256().Params().P
	curveB  = elliptic.P256().Params().B
	curveN  = elliptic.P256().Params().N
	sqrtExp = new(big.Int).Rsh(new(big.Int).Add(curveP, big.NewInt(1)), 2) // (p+1)/4
	// halfN is (n-1)/2, the largest "low-S" value.
	halfN = new(big.Int).Rsh(curveN, 1)
)

func feBig(x fe) *big.Int {
	var b [32]byte
	x.putBytes(b[:])
	return new(big.Int).SetBytes(b[:])
}

// TestCurveConstants checks point.go's written-out domain parameters
// against the standard library's.
func TestCurveConstants(t *testing.T) {
	rr := new(big.Int).Lsh(big.NewInt(1), 512)
	rr.Mod(rr, curveP)
	for name, c := range map[string][2]*big.Int{
		"p":    {feBig(feP), curveP},
		"R^2":  {feBig(feRR), rr},
		"b":    {new(big.Int).SetBytes(feBBytes[:]), curveB},
		"n":    {new(big.Int).SetBytes(curveNBytes[:]), curveN},
		"sqrt": {feBig(feSqrtExp), sqrtExp},
	} {
		if c[0].Cmp(c[1]) != 0 {
			t.Errorf("%s = %x, want %x", name, c[0], c[1])
		}
	}
}

// FuzzFieldArithmetic checks point.go's limb arithmetic against math/big on
// any two field elements.
func FuzzFieldArithmetic(f *testing.F) {
	f.Add(make([]byte, 32), make([]byte, 32))
	f.Add(bytes.Repeat([]byte{0xff}, 32), bytes.Repeat([]byte{0xff}, 32))
	f.Add(mustHex(f, hexP), append(make([]byte, 31), 1))
	f.Add(new(big.Int).Sub(curveP, big.NewInt(1)).FillBytes(make([]byte, 32)), new(big.Int).Sub(curveP, big.NewInt(2)).FillBytes(make([]byte, 32)))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if len(a) != 32 || len(b) != 32 {
			return
		}
		x, okX := feFromBytes(a)
		y, okY := feFromBytes(b)
		xb, yb := new(big.Int).SetBytes(a), new(big.Int).SetBytes(b)
		if okX != (xb.Cmp(curveP) < 0) || okY != (yb.Cmp(curveP) < 0) {
			t.Fatalf("feFromBytes below-p check wrong for %x, %x", a, b)
		}
		if !okX || !okY {
			return
		}
		xm, ym := toMont(x), toMont(y)
		if got := feBig(fromMont(xm)); got.Cmp(xb) != 0 {
			t.Fatalf("fromMont(toMont(%x)) = %x", xb, got)
		}
		mod := func(v *big.Int) *big.Int { return v.Mod(v, curveP) }
		for name, c := range map[string][2]*big.Int{
			"mul": {feBig(fromMont(montMul(xm, ym))), mod(new(big.Int).Mul(xb, yb))},
			"add": {feBig(fromMont(feAdd(xm, ym))), mod(new(big.Int).Add(xb, yb))},
			"sub": {feBig(fromMont(feSub(xm, ym))), mod(new(big.Int).Sub(xb, yb))},
			"exp": {feBig(fromMont(feSqrtCandidate(xm))), new(big.Int).Exp(xb, sqrtExp, curveP)},
		} {
			if c[0].Cmp(c[1]) != 0 {
				t.Fatalf("%s(%x, %x) = %x, math/big says %x", name, xb, yb, c[0], c[1])
			}
		}
	})
}

// bigDecompress is the test oracle for decompress, done as the JS SDK does it
// (math.ts modSqrt): y = (x³ − 3x + b)^((p+1)/4) mod p, checked by squaring.
func bigDecompress(c []byte) []byte {
	if len(c) != 33 || (c[0] != 2 && c[0] != 3) {
		return nil
	}
	x := new(big.Int).SetBytes(c[1:])
	if x.Cmp(curveP) >= 0 {
		return nil
	}
	rhs := new(big.Int).Mul(x, x)
	rhs.Sub(rhs, big.NewInt(3))
	rhs.Mul(rhs, x)
	rhs.Add(rhs, curveB)
	rhs.Mod(rhs, curveP)
	y := new(big.Int).Exp(rhs, sqrtExp, curveP)
	if sq := new(big.Int).Mul(y, y); sq.Mod(sq, curveP).Cmp(rhs) != 0 {
		return nil
	}
	if y.Bit(0) != uint(c[0]&1) {
		y.Sub(curveP, y)
	}
	u := make([]byte, 65)
	u[0] = 4
	x.FillBytes(u[1:33])
	y.FillBytes(u[33:])
	return u
}

func FuzzDecompress(f *testing.F) {
	f.Add(mustHex(f, fixturePubC))                              // fixture key
	f.Add(append([]byte{3}, mustHex(f, fixturePubC)[1:]...))    // its negation
	f.Add(append([]byte{2}, make([]byte, 32)...))               // x = 0 is on the curve
	f.Add(append([]byte{2}, append(make([]byte, 31), 1)...))    // x = 1 is not
	f.Add(append([]byte{2}, mustHex(f, hexP)...))               // x = p
	f.Add(append([]byte{3}, bytes.Repeat([]byte{0xff}, 32)...)) // x = 2^256 - 1
	f.Fuzz(func(t *testing.T, c []byte) {
		if len(c) != 33 || (c[0] != 2 && c[0] != 3) {
			return
		}
		u, err := decompress(c)
		want := bigDecompress(c)
		if (err == nil) != (want != nil) || !bytes.Equal(u, want) {
			t.Fatalf("decompress(%x) = %x, %v; math/big says %x", c, u, err, want)
		}
		// The wasm build's decompression must agree with both.
		w, err := decompressPoint(c)
		if (err == nil) != (want != nil) || !bytes.Equal(w, want) {
			t.Fatalf("decompressPoint(%x) = %x, %v; the oracle says %x", c, w, err, want)
		}
		if want != nil && !onCurve(want) {
			t.Fatalf("onCurve refuses the decompressed point %x", want)
		}
	})
}

// FuzzOnCurve checks the wasm build's point check against crypto/ecdh.
func FuzzOnCurve(f *testing.F) {
	f.Add(bigDecompress(mustHex(f, fixturePubC)))
	f.Add(append([]byte{4}, make([]byte, 64)...))
	f.Add(append([]byte{4}, bytes.Repeat([]byte{0xff}, 64)...))
	f.Fuzz(func(t *testing.T, u []byte) {
		_, err := ecdh.P256().NewPublicKey(u)
		if got := onCurve(u); got != (err == nil) {
			t.Fatalf("onCurve(%x) = %v; crypto/ecdh says %v", u, got, err)
		}
	})
}
