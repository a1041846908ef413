package accountrules

import (
	"slices"
	"testing"

	"paywallet/internal/deptest"
)

// TestImports keeps the package fit for the wasm module: no encoding/json,
// net/http, reflection or regexp anywhere in its js/wasm dependencies, and no
// fmt. (Skipped where there is no go command, as under wasm itself.)
func TestImports(t *testing.T) {
	for _, pkg := range []string{".", "../banks"} {
		deps := deptest.WasmDeps(t, pkg)
		for _, banned := range []string{"encoding/json", "net/http", "fmt", "reflect", "regexp", "encoding/gob", "encoding/xml", "text/template", "html/template"} {
			if slices.Contains(deps, banned) {
				t.Errorf("%s depends on %s under js/wasm", pkg, banned)
			}
		}
	}
}
