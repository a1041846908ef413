// Package deptest asks the go command what a package links when built for
// the browser (GOOS=js GOARCH=wasm). The wasm module and the shared packages
// compiled into it use it in tests that fail when a dependency that must not
// be there (encoding/json, net/http, a web framework) creeps in.
package deptest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// WasmList runs `go list <args>` with GOOS=js GOARCH=wasm and returns the
// whitespace-separated fields of its output. It skips the test where there
// is no go command (as under wasm itself) and in -short mode.
func WasmList(t testing.TB, args ...string) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go list")
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found:", err)
	}
	cmd := exec.Command(gocmd, append([]string{"list"}, args...)...)
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	fields := strings.Fields(string(out))
	if len(fields) == 0 {
		t.Fatalf("go list %s printed nothing", strings.Join(args, " "))
	}
	return fields
}

// WasmDeps lists every package pkg links under js/wasm, pkg included.
func WasmDeps(t testing.TB, pkg string) []string { return WasmList(t, "-deps", pkg) }

// WasmImports lists pkg's direct imports under js/wasm.
func WasmImports(t testing.TB, pkg string) []string {
	return WasmList(t, "-f", `{{join .Imports " "}}`, pkg)
}

// WasmLinked builds pkg for js/wasm with the linker's -dumpdep and returns
// the symbols the linker keeps (reached from the entry point). go list only
// says which packages are imported; the linker drops what nothing calls, so
// whether a heavy package's code is really in the module (fmt's printer,
// math/big's arithmetic) is a question for it. Like WasmList, it skips in
// -short mode and where there is no go command.
func WasmLinked(t testing.TB, pkg string) map[string]bool {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the wasm module")
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found:", err)
	}
	out := t.TempDir() + "/module.wasm"
	cmd := exec.Command(gocmd, "build", "-trimpath", "-ldflags=-dumpdep", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	// -dumpdep writes "from -> to" lines on the linker's standard error.
	dump, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, dump)
	}
	syms := map[string]bool{}
	for _, line := range strings.Split(string(dump), "\n") {
		if _, to, ok := strings.Cut(line, " -> "); ok {
			syms[to] = true
		}
	}
	if len(syms) == 0 {
		t.Fatalf("go build -ldflags=-dumpdep %s printed no dependencies", pkg)
	}
	return syms
}
