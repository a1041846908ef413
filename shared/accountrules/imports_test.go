package accountrules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
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

// TestNoSorting keeps generic sorts out of the package: instantiated for
// []string and []wire.FieldError they cost the wasm module about 4 KB of
// brotli. report.result merge-sorts by hand and RequiredBeneficiaryFields
// builds its list in order instead (TestSortErrors and
// TestRequiredBeneficiaryFieldsSorted hold them to the same results).
func TestNoSorting(t *testing.T) {
	for _, sel := range selectors(t, ".") {
		if sel == "sort" || strings.HasPrefix(sel, "slices.Sort") {
			t.Errorf("the package uses %s; see TestNoSorting", sel)
		}
	}
}

// selectors returns the imports and the package-qualified names (such as
// slices.Sort) that the non-test Go files in dir use.
func selectors(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			out = append(out, strings.Trim(imp.Path.Value, `"`))
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok {
					out = append(out, x.Name+"."+sel.Sel.Name)
				}
			}
			return true
		})
	}
	return out
}
