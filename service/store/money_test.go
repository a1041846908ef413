package store

import (
	"strings"
	"testing"
)

func TestDepositReference(t *testing.T) {
	seen := map[string]bool{}
	for range 2000 {
		r := NewDepositReference()
		if len(r) != DepositReferenceLength {
			t.Fatalf("%q has length %d", r, len(r))
		}
		got, ok := ParseDepositReference(r)
		if !ok || got != r {
			t.Fatalf("ParseDepositReference(%q) = %q, %v", r, got, ok)
		}
		if seen[r] {
			t.Fatalf("%q made twice", r)
		}
		seen[r] = true
		// As a person types it: lower case, grouped, O for 0, l for 1.
		typed := strings.ToLower(r[:4]) + " - " + r[4:]
		typed = strings.ReplaceAll(strings.ReplaceAll(typed, "0", "O"), "1", "l")
		if got, ok := ParseDepositReference(typed); !ok || got != r {
			t.Fatalf("typed %q reads as %q, %v; want %q", typed, got, ok, r)
		}
		// Every single wrong symbol and every swap of two different
		// neighbours is caught by the check symbol.
		for i := range r {
			for _, c := range depositAlphabet {
				if byte(c) == r[i] {
					continue
				}
				bad := r[:i] + string(c) + r[i+1:]
				if _, ok := ParseDepositReference(bad); ok {
					t.Fatalf("%q (one symbol of %q changed) is accepted", bad, r)
				}
			}
			if i+1 < len(r) && r[i] != r[i+1] {
				bad := r[:i] + string(r[i+1]) + string(r[i]) + r[i+2:]
				if _, ok := ParseDepositReference(bad); ok {
					t.Fatalf("%q (two neighbours of %q swapped) is accepted", bad, r)
				}
			}
		}
	}
	for _, bad := range []string{"", "ABC", "0123456789", "UUUUUUUUU", "ABCD*EFGH", "ÄBCDEFGHJ", strings.Repeat("0", 20)} {
		if got, ok := ParseDepositReference(bad); ok {
			t.Errorf("ParseDepositReference(%q) = %q, want refusal", bad, got)
		}
	}
}
