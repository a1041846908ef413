package walletcrypto

import "errors"

// errNotHex is decodeHex's one error; callers replace it with their own.
var errNotHex = errors.New("walletcrypto: not hex")

// decodeHex is hex.DecodeString (upper or lower case, even length) with an
// error of its own. encoding/hex's InvalidByteError formats itself with
// fmt, so a module that decodes with encoding/hex links fmt and the
// reflection behind it (about 150 KB of wasm) for an error text that the
// callers here throw away.
func decodeHex(s string) ([]byte, error) {
	if len(s)%2 != 0 {
		return nil, errNotHex
	}
	out := make([]byte, len(s)/2)
	for i := range out {
		hi, ok1 := fromHexChar(s[2*i])
		lo, ok2 := fromHexChar(s[2*i+1])
		if !ok1 || !ok2 {
			return nil, errNotHex
		}
		out[i] = hi<<4 | lo
	}
	return out, nil
}

func fromHexChar(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
