//go:build js

package walletcrypto

// decompress is [decompressPoint] in the wasm build: only public points are
// decompressed, and point.go's limb arithmetic keeps crypto/elliptic and
// math/big out of the module.
func decompress(c []byte) ([]byte, error) { return decompressPoint(c) }
