package service

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEveryCodeHasAStatus: every error code an operation can answer with
// (a constant Code…, the first argument of errorf, a Code: field of an
// Error literal) is in the one code-to-status table; a missing one would be
// answered 500.
func TestEveryCodeHasAStatus(t *testing.T) {
	files, err := filepath.Glob("payments/*.go")
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]token.Position{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		literal := func(e ast.Expr) {
			if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil {
					codes[v] = fset.Position(lit.Pos())
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, id := range n.Names {
					if strings.HasPrefix(id.Name, "Code") && i < len(n.Values) {
						literal(n.Values[i])
					}
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "errorf" && len(n.Args) > 0 {
					literal(n.Args[0])
				}
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok && id.Name == "Code" {
					literal(n.Value)
				}
			}
			return true
		})
	}
	if len(codes) < 20 {
		t.Fatalf("found only %d codes; is the scan still finding them?", len(codes))
	}
	for code, at := range codes {
		if _, ok := statusOf[code]; !ok {
			t.Errorf("%s: code %s has no status in statusOf", at, code)
		}
	}
}
