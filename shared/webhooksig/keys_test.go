package webhooksig

import "testing"

func newGeneration(t testing.TB) *Generation {
	t.Helper()
	g, err := GenerateGeneration()
	if err != nil {
		t.Fatal(err)
	}
	return g
}
