//go:build js && wasm

package main

import (
	"slices"
	"strconv"
)

// scratchJSON writes v into scratch as ASCII JSON and returns its length,
// if v is a string, a bool, or a map[string]any of those (a flow method's
// usual result) and fits; otherwise it reports false and the caller makes
// the JavaScript value through syscall/js. Non-ASCII characters are
// written as \u escapes, so each byte is one character for the glue.
func scratchJSON(v any) (int, bool) {
	if !jsonResult(v) {
		return 0, false
	}
	var b []byte
	switch v := v.(type) {
	case string, bool:
		b = appendJSONValue(scratch[:0], v)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(scratch[:0], '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONValue(b, v[k])
		}
		b = append(b, '}')
	}
	// append reallocates past scratch's capacity: then it did not fit.
	if len(b) > 0 && &b[0] != &scratch[0] {
		return 0, false
	}
	return len(b), true
}

// jsonResult reports whether v is a string, a bool, or a map[string]any of
// those.
func jsonResult(v any) bool {
	switch v := v.(type) {
	case string, bool:
		return true
	case map[string]any:
		for _, x := range v {
			switch x.(type) {
			case string, bool:
			default:
				return false
			}
		}
		return true
	}
	return false
}

func appendJSONValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		return appendJSONString(b, v)
	case bool:
		return strconv.AppendBool(b, v)
	}
	panic("appendJSONValue: unexpected type")
}

// appendJSONString appends s as a JSON string of ASCII characters. Invalid
// UTF-8 becomes U+FFFD (ranging over a string yields it), as syscall/js's
// own string conversion does.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r >= 0x20 && r < 0x7f:
			b = append(b, byte(r))
		case r < 0x10000:
			b = append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
		default:
			r -= 0x10000
			hi, lo := 0xd800+(r>>10), 0xdc00+(r&0x3ff)
			b = append(b, '\\', 'u', hexDigits[hi>>12&0xf], hexDigits[hi>>8&0xf], hexDigits[hi>>4&0xf], hexDigits[hi&0xf])
			b = append(b, '\\', 'u', hexDigits[lo>>12&0xf], hexDigits[lo>>8&0xf], hexDigits[lo>>4&0xf], hexDigits[lo&0xf])
		}
	}
	return append(b, '"')
}
