package payments

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOperationsKnowNoHTTPServing: the domain takes typed requests and
// returns typed results; reading requests and writing answers is the HTTP
// layer's (package service). A payments function that takes an
// *http.Request, or a file that names http.ResponseWriter or an HTTP
// status, has let the layers run together again. (net/http itself stays
// allowed: the service is an HTTP client of OIDC providers and webhook
// receivers.)
func TestOperationsKnowNoHTTPServing(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p := strings.Trim(imp.Path.Value, `"`); p == "paywallet/service" || p == "net/http/httptest" {
				t.Errorf("%s imports %s", name, p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				for _, p := range n.Type.Params.List {
					if star, ok := p.Type.(*ast.StarExpr); ok && httpName(star.X) == "Request" {
						t.Errorf("%s: %s takes an *http.Request; decoding belongs to the HTTP layer", fset.Position(n.Pos()), n.Name.Name)
					}
				}
			case *ast.SelectorExpr:
				if name := httpName(n); name == "ResponseWriter" || strings.HasPrefix(name, "Status") {
					t.Errorf("%s: http.%s belongs to the HTTP layer", fset.Position(n.Pos()), name)
				}
			}
			return true
		})
	}
}

// httpName is Name of an expression http.Name, else "".
func httpName(e ast.Expr) string {
	if sel, ok := e.(*ast.SelectorExpr); ok {
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == "http" {
			return sel.Sel.Name
		}
	}
	return ""
}
