package accountrules

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImports keeps the package fit for the wasm module: no encoding/json,
// net/http, reflection or regexp anywhere in its js/wasm dependencies, and no
// fmt. (Skipped where there is no go command, as under wasm itself.)
func TestImports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	for _, pkg := range []string{".", "../banks"} {
		cmd := exec.Command(goBin, "list", "-deps", pkg)
		cmd.Env = append(cmd.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		deps := strings.Fields(string(out))
		if len(deps) == 0 {
			t.Fatalf("go list gave no dependencies for %s", pkg)
		}
		for _, banned := range []string{"encoding/json", "net/http", "fmt", "reflect", "regexp", "encoding/gob", "encoding/xml", "text/template", "html/template"} {
			if slices.Contains(deps, banned) {
				t.Errorf("%s depends on %s under js/wasm", pkg, banned)
			}
		}
	}
}
