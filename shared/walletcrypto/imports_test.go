//go:build !js

package walletcrypto

import (
	"slices"
	"testing"

	"paywallet/internal/deptest"
)

// TestImports keeps the package small enough for the wasm module: no
// encoding/json, net/http or reflection-based encoders anywhere in its js/wasm
// dependencies, and no fmt of its own (github.com/mr-tron/base58 brings fmt).
func TestImports(t *testing.T) {
	deps := deptest.WasmDeps(t, ".")
	for _, banned := range []string{"encoding/json", "net/http", "encoding/gob", "encoding/xml", "text/template", "html/template"} {
		if slices.Contains(deps, banned) {
			t.Errorf("walletcrypto depends on %s", banned)
		}
	}
	// The wasm module does its curve work with WebCrypto: the standard
	// library's curve code (four NIST curves), its HPKE and ML-KEM would
	// only make the module bigger.
	for _, banned := range []string{"crypto/ecdsa", "crypto/ecdh", "crypto/elliptic", "crypto/hpke", "crypto/mlkem", "crypto/internal/fips140/mlkem", "crypto/internal/fips140/nistec", "crypto/internal/fips140/ecdsa"} {
		if slices.Contains(deps, banned) {
			t.Errorf("walletcrypto's js/wasm build depends on %s", banned)
		}
	}
	for _, imp := range deptest.WasmImports(t, ".") {
		if imp == "fmt" || imp == "reflect" {
			t.Errorf("walletcrypto imports %s", imp)
		}
	}
}
