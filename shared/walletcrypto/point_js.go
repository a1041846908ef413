//go:build js

package walletcrypto

// decompress is [decompressBig] in the wasm build: only public points are
// decompressed, and math/big keeps crypto/elliptic out of the module.
func decompress(c []byte) ([]byte, error) { return decompressBig(c) }
