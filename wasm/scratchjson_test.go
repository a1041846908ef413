//go:build js && wasm

package main

import (
	"strings"
	"syscall/js"
	"testing"
)

// TestScratchJSON: what the direct calls hand over as JSON in scratch
// parses, in JavaScript, to the value syscall/js would have made; what is
// not a string, a bool or a map of those, or does not fit, is refused.
func TestScratchJSON(t *testing.T) {
	parse := js.Global().Get("JSON").Get("parse")
	stringify := js.Global().Get("JSON").Get("stringify")
	for _, v := range []any{
		"",
		"plain",
		`quote " backslash \ slash /`,
		"controls \x00\x01\n\t\x1f\x7f",
		"héllo ✓ 𝄞 \U0010FFFF",
		"bad utf-8 \xff\xfe",
		true,
		map[string]any{},
		map[string]any{"handle": "ab12", "publicKey": "02ff", "ok": false, "é": "𝄞"},
		strings.Repeat("x", scratchSize-2),
	} {
		n, ok := scratchJSON(v)
		if !ok {
			t.Errorf("%.40q: refused", v)
			continue
		}
		for _, c := range scratch[:n] {
			if c >= 0x80 {
				t.Fatalf("%.40q: JSON holds the non-ASCII byte %#x", v, c)
			}
		}
		got := parse.Invoke(string(scratch[:n]))
		want := js.ValueOf(v)
		// Key order aside (JSON's is sorted), the values must be equal.
		canon := js.Global().Call("eval", `(v) => typeof v === "object" ? Object.fromEntries(Object.entries(v).sort()) : v`)
		if g, w := stringify.Invoke(canon.Invoke(got)).String(), stringify.Invoke(canon.Invoke(want)).String(); g != w {
			t.Errorf("%.40q: JSON parses to %s, syscall/js makes %s", v, g, w)
		}
	}
	for _, v := range []any{
		nil, 1, 1.5, []any{"a"}, map[string]any{"n": 1}, map[string]any{"m": map[string]any{}},
		strings.Repeat("x", scratchSize-1), // with its quotes, one byte too many
		strings.Repeat("é", scratchSize/6+1),
	} {
		if n, ok := scratchJSON(v); ok {
			t.Errorf("%.40v: written (%d bytes), want refused", v, n)
		}
	}
}
