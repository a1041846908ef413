package walletcrypto

import (
	"crypto/sha256"
	"crypto/subtle"

	"github.com/mr-tron/base58"
)

// Base58CheckEncode returns base58(payload || checksum) with the Bitcoin alphabet,
// where checksum is the first 4 bytes of SHA-256(SHA-256(payload)).
// Each leading zero byte becomes a leading '1'.
func Base58CheckEncode(payload []byte) string {
	b := make([]byte, 0, len(payload)+4)
	b = append(b, payload...)
	sum := checksum(payload)
	return base58.Encode(append(b, sum[:]...))
}

// Base58CheckDecode reverses [Base58CheckEncode]. It refuses the empty string,
// characters outside the Bitcoin alphabet, input shorter than the 4-byte checksum,
// and a checksum mismatch. The encoding is canonical: a string that decodes
// re-encodes to itself.
func Base58CheckDecode(s string) ([]byte, error) {
	if s == "" {
		return nil, malformed("base58check: empty")
	}
	b, ok := base58Decode(s)
	if !ok {
		return nil, malformed("base58check: character outside the base58 alphabet")
	}
	if len(b) < 4 {
		return nil, malformed("base58check: shorter than its checksum")
	}
	payload, got := b[:len(b)-4:len(b)-4], b[len(b)-4:]
	want := checksum(payload)
	if subtle.ConstantTimeCompare(got, want[:]) != 1 {
		return nil, malformed("base58check: checksum mismatch")
	}
	return payload, nil
}

func checksum(payload []byte) [4]byte {
	h1 := sha256.Sum256(payload)
	h2 := sha256.Sum256(h1[:])
	return [4]byte(h2[:4])
}
