//go:build js

package walletcrypto

// base58Decode is [decodeBase58] in the wasm build: see there for why.
func base58Decode(s string) ([]byte, bool) { return decodeBase58(s) }
