package ids

import (
	"sort"
	"testing"
	"time"
)

func TestNewIsOrderedAndValid(t *testing.T) {
	const n = 5000
	got := make([]string, n)
	for i := range got {
		got[i] = New("Customer")
	}
	if !sort.StringsAreSorted(got) {
		t.Fatal("ids made in sequence are not in lexical order")
	}
	seen := map[string]bool{}
	for _, id := range got {
		if !Valid("Customer", id) {
			t.Fatalf("Valid(%q) = false", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
		if id[9+14] != '7' {
			t.Fatalf("%q is not a version 7 uuid", id)
		}
	}
}

func TestTimestampPrefix(t *testing.T) {
	mu.Lock()
	lastMS = 0 // an earlier test may have left a later time behind
	mu.Unlock()
	a := newV7(time.UnixMilli(1_700_000_000_000))
	if a[:13] != "018bcfe5-6800" {
		t.Fatalf("timestamp bits = %q, want 018bcfe5-6800", a[:13])
	}
}

func TestValid(t *testing.T) {
	tests := []struct {
		prefix, id string
		want       bool
	}{
		{"Customer", "Customer:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b", true},
		{"Customer", "Session:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b", false},
		{"Customer", "Customer:0190A1B2-C3D4-7E5F-8A6B-7C8D9E0F1A2B", false},
		{"Customer", "Customer:0190a1b2c3d47e5f8a6b7c8d9e0f1a2b", false},
		{"Customer", "Customer:", false},
		{"Customer", "", false},
		{"Customer", "Customer:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b/x", false},
	}
	for _, tt := range tests {
		if got := Valid(tt.prefix, tt.id); got != tt.want {
			t.Errorf("Valid(%q, %q) = %v, want %v", tt.prefix, tt.id, got, tt.want)
		}
	}
}
