package walletcrypto

import "unicode/utf8"

// The JSON forms of this package (OTP plaintext, JSON HPKE bundle, target bundle
// envelope and data, stamp) are flat objects whose values are all strings. This file
// parses and writes exactly that subset of RFC 8259, without encoding/json:
//
//   - parsing allows whitespace between tokens, the standard escapes including
//     \uXXXX and surrogate pairs, and refuses duplicate keys, non-string values,
//     invalid UTF-8, lone surrogates and anything after the closing brace;
//   - writing emits no whitespace and escapes like JavaScript's JSON.stringify:
//     only '"', '\\' and control characters (as \b \t \n \f \r or \u00xx).

// maxFields bounds the members of a flat object; our objects have at most five.
const maxFields = 32

// field is one member of a flat JSON object.
type field struct{ key, value string }

// flatObject is a flat JSON object, members in document order.
type flatObject []field

// get returns the value of key and whether it is present.
func (o flatObject) get(key string) (string, bool) {
	for _, f := range o {
		if f.key == key {
			return f.value, true
		}
	}
	return "", false
}

// parseFlat parses a JSON object whose values are all strings.
func parseFlat(b []byte) (flatObject, error) {
	p := flatParser{b: b}
	p.space()
	if !p.consume('{') {
		return nil, malformed("json: expected an object")
	}
	o := flatObject{}
	p.space()
	if p.consume('}') {
		return p.end(o)
	}
	for {
		p.space()
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if !p.consume(':') {
			return nil, malformed("json: expected ':'")
		}
		p.space()
		if p.i < len(p.b) && p.b[p.i] != '"' {
			return nil, malformed("json: values must be strings")
		}
		value, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := o.get(key); dup {
			return nil, malformed("json: duplicate key")
		}
		if len(o) == maxFields {
			return nil, malformed("json: too many members")
		}
		o = append(o, field{key, value})
		p.space()
		if p.consume(',') {
			continue
		}
		if p.consume('}') {
			return p.end(o)
		}
		return nil, malformed("json: expected ',' or '}'")
	}
}

type flatParser struct {
	b []byte
	i int
}

func (p *flatParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *flatParser) consume(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *flatParser) end(o flatObject) (flatObject, error) {
	p.space()
	if p.i != len(p.b) {
		return nil, malformed("json: data after the object")
	}
	return o, nil
}

// str parses a JSON string starting at the opening quote.
func (p *flatParser) str() (string, error) {
	if !p.consume('"') {
		return "", malformed("json: expected a string")
	}
	start := p.i
	// Fast path: no escapes and ASCII only.
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := string(p.b[start:p.i])
			p.i++
			return s, nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		p.i++
	}
	out := append([]byte(nil), p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(out), nil
		case c < 0x20:
			return "", malformed("json: control character in string")
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && size == 1 {
				return "", malformed("json: invalid UTF-8")
			}
			out = append(out, p.b[p.i:p.i+size]...)
			p.i += size
		case c != '\\':
			out = append(out, c)
			p.i++
		default:
			var err error
			if out, err = p.escape(out); err != nil {
				return "", err
			}
		}
	}
	return "", malformed("json: unterminated string")
}

// escape decodes the escape sequence at p.i (a backslash) and appends it to out.
func (p *flatParser) escape(out []byte) ([]byte, error) {
	if p.i+1 >= len(p.b) {
		return nil, malformed("json: unterminated string")
	}
	c := p.b[p.i+1]
	p.i += 2
	switch c {
	case '"', '\\', '/':
		return append(out, c), nil
	case 'b':
		return append(out, '\b'), nil
	case 'f':
		return append(out, '\f'), nil
	case 'n':
		return append(out, '\n'), nil
	case 'r':
		return append(out, '\r'), nil
	case 't':
		return append(out, '\t'), nil
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return nil, malformed("json: bad \\u escape")
		}
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return nil, malformed("json: lone surrogate")
		case r >= 0xd800 && r <= 0xdbff:
			if p.i+1 >= len(p.b) || p.b[p.i] != '\\' || p.b[p.i+1] != 'u' {
				return nil, malformed("json: lone surrogate")
			}
			p.i += 2
			lo, ok := p.hex4()
			if !ok || lo < 0xdc00 || lo > 0xdfff {
				return nil, malformed("json: lone surrogate")
			}
			r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
		}
		return utf8.AppendRune(out, r), nil
	default:
		return nil, malformed("json: unknown escape")
	}
}

func (p *flatParser) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	p.i += 4
	return r, true
}

// appendFlat appends the compact encoding of o to dst, members in order.
func appendFlat(dst []byte, o flatObject) []byte {
	dst = append(dst, '{')
	for i, f := range o {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, f.key)
		dst = append(dst, ':')
		dst = appendString(dst, f.value)
	}
	return append(dst, '}')
}

// appendString appends s as a JSON string, escaped like JSON.stringify.
// Invalid UTF-8 bytes are written as \ufffd.
func appendString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			if c < 0x20 {
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				dst = append(dst, c)
			}
		}
		i++
	}
	return append(dst, '"')
}
