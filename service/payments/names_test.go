package payments

import "testing"

func TestPartialName(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Ana Maria Diaz", "Ana M. Diaz"},
		{"Ana Maria Luisa Diaz", "Ana M. L. Diaz"},
		{"Ana Diaz", "A. Diaz"},
		{"Ólafur", "Ó."},
		{"  Ana   Diaz ", "A. Diaz"},
		{"", ""},
	} {
		if got := partialName(tt.in); got != tt.want {
			t.Errorf("partialName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
