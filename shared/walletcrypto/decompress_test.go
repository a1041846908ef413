package walletcrypto

import (
	"bytes"
	"crypto/elliptic"
	"math/big"
	"testing"
)

var (
	curveP = elliptic.P256().Params().P
	curveB = elliptic.P256().Params().B
	// sqrtExp is (p+1)/4: since p ≡ 3 (mod 4), a^sqrtExp is a square root of a
	// whenever a is a quadratic residue.
	sqrtExp = new(big.Int).Rsh(new(big.Int).Add(curveP, big.NewInt(1)), 2)
	// halfN is (n-1)/2, the largest "low-S" value.
	halfN = new(big.Int).Rsh(curveN, 1)
)

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
	})
}
