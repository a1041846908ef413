package service

import (
	"go/build"
	"strings"
	"testing"
)

// TestHTTPLayerKnowsNoStore: the HTTP layer serves the domain's operations
// and nothing else; the store is the domain's (package payments). A file of
// package service (tests aside) that imports paywallet/service/store or a
// package under it has let the layers run together again: a handler that
// opens a transaction, a principal that is a store row.
func TestHTTPLayerKnowsNoStore(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkg.Imports { // of the non-test files only
		if p == "paywallet/service/store" || strings.HasPrefix(p, "paywallet/service/store/") {
			t.Errorf("package service imports %s (%v); the store is the domain's", p, pkg.ImportPos[p])
		}
	}
}
