//go:build !js

package walletcrypto

import "github.com/mr-tron/base58"

// base58Decode is github.com/mr-tron/base58's Decode on the host, where fmt
// costs nothing; the wasm build uses [decodeBase58].
func base58Decode(s string) ([]byte, bool) {
	b, err := base58.Decode(s)
	return b, err == nil
}
