package rates

import "testing"

func TestEquivalent(t *testing.T) {
	s := Default()
	if v, ok := s.Equivalent(12345, "USD", "USD"); !ok || v != 12345 {
		t.Fatalf("USD→USD %d %v", v, ok)
	}
	// Round trip through another currency loses at most the spreads.
	eur, ok := s.Equivalent(10000, "USD", "EUR")
	if !ok || eur <= 0 {
		t.Fatalf("USD→EUR %d %v", eur, ok)
	}
	back, ok := s.Equivalent(eur, "EUR", "USD")
	if !ok || back > 10000 || back < 9000 {
		t.Fatalf("100 USD → %d EUR cents → %d USD cents", eur, back)
	}
	if _, ok := s.Equivalent(1, "USD", "XXX"); ok {
		t.Fatal("unknown currency converted")
	}
}
