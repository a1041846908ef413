package walletcrypto

// decodeBase58 decodes s with the Bitcoin alphabet, each leading '1' a
// leading zero byte, as github.com/mr-tron/base58's Decode does (the tests
// check the two agree). The wasm build uses it instead of that Decode,
// whose errors are made with fmt.Errorf and would link fmt and the
// reflection behind it; the host build keeps mr-tron/base58 (base58_native.go).
// It reports false for the empty string and a character outside the alphabet.
func decodeBase58(s string) ([]byte, bool) {
	if s == "" {
		return nil, false
	}
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	// Each base58 digit carries log(58)/log(256) < 0.74 bytes.
	out := make([]byte, (len(s)-zeros)*733/1000+1)
	size := 0 // bytes of out in use, from the end
	for i := zeros; i < len(s); i++ {
		d := base58Digit(s[i])
		if d < 0 {
			return nil, false
		}
		carry := d
		j := 0
		for k := len(out) - 1; k >= 0 && (carry != 0 || j < size); k-- {
			carry += 58 * int(out[k])
			out[k] = byte(carry)
			carry >>= 8
			j++
		}
		size = j
	}
	start := len(out) - size
	for start < len(out) && out[start] == 0 {
		start++
	}
	res := make([]byte, zeros+len(out)-start)
	copy(res[zeros:], out[start:])
	return res, true
}

// base58Digit is the value of c in the Bitcoin alphabet, or -1.
func base58Digit(c byte) int {
	switch {
	case '1' <= c && c <= '9':
		return int(c - '1')
	case 'A' <= c && c <= 'H':
		return int(c-'A') + 9
	case 'J' <= c && c <= 'N':
		return int(c-'J') + 17
	case 'P' <= c && c <= 'Z':
		return int(c-'P') + 22
	case 'a' <= c && c <= 'k':
		return int(c-'a') + 33
	case 'm' <= c && c <= 'z':
		return int(c-'m') + 44
	}
	return -1
}
