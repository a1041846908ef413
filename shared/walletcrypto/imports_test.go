//go:build !js

package walletcrypto

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImports keeps the package small enough for the wasm module: no
// encoding/json, net/http or reflection-based encoders anywhere in its js/wasm
// dependencies, and no fmt of its own (github.com/mr-tron/base58 brings fmt).
func TestImports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	list := func(format string) []string {
		cmd := exec.Command(goBin, "list", "-f", format, ".")
		cmd.Env = append(cmd.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		return strings.Fields(string(out))
	}
	deps := list(`{{join .Deps " "}}`)
	for _, banned := range []string{"encoding/json", "net/http", "encoding/gob", "encoding/xml", "text/template", "html/template"} {
		if slices.Contains(deps, banned) {
			t.Errorf("walletcrypto depends on %s", banned)
		}
	}
	for _, imp := range list(`{{join .Imports " "}}`) {
		if imp == "fmt" || imp == "reflect" {
			t.Errorf("walletcrypto imports %s", imp)
		}
	}
}
