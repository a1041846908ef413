//go:build !js

package main

// This file runs on the host (go test ./... on linux), where the rest of the
// package is excluded by its js && wasm build constraint. It asks the go
// command what the js/wasm build of paywallet/wasm links and fails if the
// module would grow a dependency it must not have.

import (
	"strings"
	"testing"

	"paywallet/internal/deptest"
)

const wasmPackage = "paywallet/wasm"

// forbidden reports why the wasm module must not link pkg, or "".
func forbidden(pkg string) string {
	switch {
	case pkg == "encoding/json":
		return "reflection-based JSON costs ~0.4 MB; parse JSON with the browser's JSON or walletcrypto's flat-JSON helper"
	case pkg == "regexp":
		return "accountrules matches its patterns by hand; regexp and its tables cost size for nothing"
	case pkg == "net/http":
		return "the wallet module does no networking; the page talks to the BFF"
	case strings.HasPrefix(pkg, "github.com/gofiber/"):
		return "Fiber is the BFF's web framework"
	case pkg == "crypto/ecdsa", pkg == "crypto/ecdh", pkg == "crypto/elliptic",
		strings.HasSuffix(pkg, "/nistec"), strings.HasSuffix(pkg, "fips140/ecdsa"), strings.HasSuffix(pkg, "fips140/ecdh"):
		return "the module's P-256 work is WebCrypto's (non-extractable keys, native speed); the standard library's curve code would only add size"
	case pkg == "crypto/hpke", strings.Contains(pkg, "mlkem"):
		return "HPKE is walletcrypto's over WebCrypto's Diffie-Hellman; the standard library's brings ML-KEM and every KEM"
	case strings.HasPrefix(pkg, "github.com/cloudflare/circl"):
		return "circl is a test oracle, not part of the module"
	}
	return ""
}

func TestWasmDependencies(t *testing.T) {
	deps := deptest.WasmDeps(t, wasmPackage)
	found := make(map[string]bool, len(deps))
	for _, pkg := range deps {
		found[pkg] = true
		if why := forbidden(pkg); why != "" {
			t.Errorf("%s links %s: %s", wasmPackage, pkg, why)
		}
	}
	// Guard against a vacuous pass (wrong package, wrong GOOS, empty output).
	for _, want := range []string{wasmPackage, "paywallet/shared/walletcrypto", "paywallet/shared/accountrules", "syscall/js"} {
		if !found[want] {
			t.Errorf("%s does not link %s; is the dependency listing right?", wasmPackage, want)
		}
	}
}

// heavyCode are symbol prefixes whose code the module must not link even
// though their packages are imported somewhere below it: fmt's printer and
// math/big's arithmetic (about 150 KB and 140 KB of wasm) come in through
// one call of, say, hex.InvalidByteError.Error or big.Int.SetString, and
// reflection-based code through fmt. Their small init functions may stay.
var heavyCode = []string{"fmt.(*pp).", "fmt.Sprint", "fmt.Errorf", "fmt.Fprint", "math/big.nat.", "math/big.(*Int).", "reflect.Value.", "encoding/json."}

func TestWasmLinkedCode(t *testing.T) {
	syms := deptest.WasmLinked(t, "./")
	if !syms["main.main"] {
		t.Fatal("the dependency dump has no main.main; is it the module's?")
	}
	for sym := range syms {
		// Argument-liveness data symbols are shared by identical
		// signatures across packages; they are not code.
		if strings.Contains(sym, ".arginfo") || strings.Contains(sym, ".argliveinfo") {
			continue
		}
		for _, p := range heavyCode {
			if strings.HasPrefix(sym, p) {
				t.Errorf("the module links %s", sym)
			}
		}
	}
}

func TestWasmDirectImports(t *testing.T) {
	imports := deptest.WasmImports(t, wasmPackage)
	for _, pkg := range imports {
		first, _, _ := strings.Cut(pkg, "/")
		switch {
		case pkg == "fmt":
			// fmt drags in reflection-based formatting; errors and
			// strings cover what the module needs.
			t.Errorf("%s imports fmt", wasmPackage)
		case strings.HasPrefix(pkg, "paywallet/shared/"):
		case strings.HasPrefix(pkg, "paywallet/"):
			t.Errorf("%s imports %s; only paywallet/shared/... is allowed", wasmPackage, pkg)
		case strings.Contains(first, "."):
			t.Errorf("%s imports %s; only the standard library and paywallet/shared/... are allowed", wasmPackage, pkg)
		}
	}
}
