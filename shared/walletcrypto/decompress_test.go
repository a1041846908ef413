//go:build !js

package walletcrypto

import (
	"bytes"
	"crypto/ecdh"
	"crypto/elliptic"
	"math/big"
	"testing"
)

// halfN is (n-1)/2, the largest "low-S" value.
var halfN = new(big.Int).Rsh(curveN, 1)

// TestCurveConstants checks the written-out domain parameters against the
// standard library's.
func TestCurveConstants(t *testing.T) {
	params := elliptic.P256().Params()
	for name, c := range map[string][2]*big.Int{"p": {curveP, params.P}, "b": {curveB, params.B}, "n": {curveN, params.N}} {
		if c[0].Cmp(c[1]) != 0 {
			t.Errorf("%s = %x, want %x", name, c[0], c[1])
		}
	}
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
		w, err := decompressBig(c)
		if (err == nil) != (want != nil) || !bytes.Equal(w, want) {
			t.Fatalf("decompressBig(%x) = %x, %v; the oracle says %x", c, w, err, want)
		}
		if want != nil && !onCurveBig(want) {
			t.Fatalf("onCurveBig refuses the decompressed point %x", want)
		}
	})
}

// FuzzOnCurveBig checks the wasm build's point check against crypto/ecdh.
func FuzzOnCurveBig(f *testing.F) {
	f.Add(bigDecompress(mustHex(f, fixturePubC)))
	f.Add(append([]byte{4}, make([]byte, 64)...))
	f.Add(append([]byte{4}, bytes.Repeat([]byte{0xff}, 64)...))
	f.Fuzz(func(t *testing.T, u []byte) {
		_, err := ecdh.P256().NewPublicKey(u)
		if got := onCurveBig(u); got != (err == nil) {
			t.Fatalf("onCurveBig(%x) = %v; crypto/ecdh says %v", u, got, err)
		}
	})
}
