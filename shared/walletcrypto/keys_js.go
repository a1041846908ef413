//go:build js

package walletcrypto

// In the wasm build the module's private keys are WebCrypto CryptoKeys
// (wasm/), so this package holds public keys only, checked with point.go's
// limb arithmetic: crypto/ecdsa, crypto/ecdh and crypto/elliptic, which would
// link the code of four NIST curves, and math/big stay out of the module.

// nativePublic is empty here: nothing of the standard library's curve code
// is kept beside the 65 bytes.
type nativePublic struct{}

// parseNativePublic checks that b (65 bytes, 04 || X || Y) is a point of
// P-256 other than the identity.
func parseNativePublic(b []byte) (nativePublic, error) {
	if !onCurve(b) {
		return nativePublic{}, ErrInvalidPublicKey
	}
	return nativePublic{}, nil
}
