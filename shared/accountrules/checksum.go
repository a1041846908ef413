package accountrules

import (
	"strings"
	"time"
	"unicode/utf8"

	"paywallet/shared/wire"
)

// ibanChecksum is the ISO 13616 check (ISO 7064 MOD 97-10) of an IBAN whose
// shape the pattern has already checked: move the first four characters to
// the end, read letters as 10 to 35, and the number must leave 1 modulo 97.
// Check digits 00, 01 and 99 are never issued and are refused.
func ibanChecksum(s string) (string, *wire.FieldConstraint) {
	if ibanValid(s) {
		return "", nil
	}
	return "has wrong IBAN check digits (ISO 13616 mod 97)", &wire.FieldConstraint{Format: "iban"}
}

func ibanValid(s string) bool {
	if len(s) < 5 {
		return false
	}
	if cd := s[2:4]; cd == "00" || cd == "01" || cd == "99" {
		return false
	}
	rem := 0
	for _, c := range []byte(s[4:] + s[:4]) {
		switch {
		case isDigit(c):
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A') + 10) % 97
		case c >= 'a' && c <= 'z':
			rem = (rem*100 + int(c-'a') + 10) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// Spark addresses.
const (
	sparkHRP       = "spark"
	sparkLength    = 87
	bech32Alphabet = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
	bech32Const    = 1          // BIP-173
	bech32mConst   = 0x2bc830a3 // BIP-350; what the Spark SDKs write
)

// sparkAddress checks a SPARK_WALLET address: 87 characters, the prefix
// spark1 in any case, all one case, the bech32 alphabet after the
// separator, and a checksum valid under the BIP-173 polymod with the bech32
// or the bech32m constant.
func sparkAddress(s string) (string, *wire.FieldConstraint) {
	if utf8.RuneCountInString(s) != sparkLength {
		return "must be exactly 87 characters long", &wire.FieldConstraint{MinLength: intp(sparkLength), MaxLength: intp(sparkLength)}
	}
	if asciiLower(s[:len(sparkHRP)+1]) != sparkHRP+"1" {
		return "must start with spark1", &wire.FieldConstraint{Pattern: "^[sS][pP][aA][rR][kK]1"}
	}
	if !plainASCII(s) {
		return "must use only the bech32 alphabet after spark1", &wire.FieldConstraint{Format: "bech32"}
	}
	lower := asciiLower(s)
	if s != lower && s != asciiUpper(s) {
		return "must be all lower case or all upper case", &wire.FieldConstraint{Format: "bech32"}
	}
	data := make([]byte, 0, len(s)-len(sparkHRP)-1)
	for i := len(sparkHRP) + 1; i < len(lower); i++ {
		v := strings.IndexByte(bech32Alphabet, lower[i])
		if v < 0 {
			return "must use only the bech32 alphabet after spark1", &wire.FieldConstraint{Format: "bech32"}
		}
		data = append(data, byte(v))
	}
	if c := bech32Polymod(sparkHRP, data); c != bech32Const && c != bech32mConst {
		return "has an invalid bech32 checksum", &wire.FieldConstraint{Format: "bech32"}
	}
	return "", nil
}

func plainASCII(s string) bool {
	return allBytes(s, func(c byte) bool { return c > 0x20 && c < 0x7f })
}

// bech32Polymod is the BIP-173 checksum function over the expanded
// human-readable part and the 5-bit data values (checksum included).
func bech32Polymod(hrp string, data []byte) uint32 {
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	step := func(v byte) {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := range gen {
			if (top>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	for i := 0; i < len(hrp); i++ {
		step(hrp[i] >> 5)
	}
	step(0)
	for i := 0; i < len(hrp); i++ {
		step(hrp[i] & 31)
	}
	for _, v := range data {
		step(v)
	}
	return chk
}

// now is the clock of the birth-date rule; tests replace it.
var now = time.Now

// earliestBirthDate is the lower bound of birthDate.
const earliestBirthDate = "1900-01-01"

// birthDate checks that a YYYY-MM-DD string is a real calendar date, not
// before 1900 and not in the future. "The future" starts after today's date in
// UTC+14, the earliest time zone, so that nobody born today anywhere is refused.
func birthDate(s string) (string, *wire.FieldConstraint) {
	d, ok := calendarDate(s)
	if !ok {
		return "must be a real calendar date", &wire.FieldConstraint{Format: "date"}
	}
	if s < earliestBirthDate {
		return "must not be before " + earliestBirthDate, &wire.FieldConstraint{Format: "date"}
	}
	y, m, day := now().UTC().Add(14 * time.Hour).Date()
	if d.After(time.Date(y, m, day, 0, 0, 0, 0, time.UTC)) {
		return "must not be in the future", &wire.FieldConstraint{Format: "date"}
	}
	return "", nil
}

// calendarDate parses YYYY-MM-DD and reports whether it names a real day (no
// 2023-02-29). It is time.Parse(time.DateOnly, s) without the general layout
// parser, which would add tens of kilobytes to the wasm module.
func calendarDate(s string) (time.Time, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return time.Time{}, false
	}
	num := func(part string) (int, bool) {
		n := 0
		for i := 0; i < len(part); i++ {
			c := part[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	y, okY := num(s[:4])
	m, okM := num(s[5:7])
	d, okD := num(s[8:])
	if !okY || !okM || !okD || m < 1 || m > 12 || d < 1 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d { // time.Date normalises 02-30 to 03-02
		return time.Time{}, false
	}
	return t, true
}

// asciiLower and asciiUpper change the case of A-Z and a-z only. Spark
// addresses are ASCII; the Unicode-aware strings.ToLower would also pull
// Unicode case tables into the wasm module.
func asciiLower(s string) string { return mapASCII(s, 'A', 'Z', 'a'-'A') }

func asciiUpper(s string) string { return mapASCII(s, 'a', 'z', 'A'-'a') }

func mapASCII(s string, lo, hi byte, delta int) string {
	b := []byte(s)
	for i, c := range b {
		if c >= lo && c <= hi {
			b[i] = byte(int(c) + delta)
		}
	}
	return string(b)
}
