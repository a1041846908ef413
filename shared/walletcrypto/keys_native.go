//go:build !js

package walletcrypto

// This file holds what only the host build has: private keys as Go values,
// for the service (target and export signers, session keys it seals) and
// for host tests. In the wasm build private keys are WebCrypto CryptoKeys
// that the module never sees the bytes of (wasm/), and crypto/ecdsa,
// crypto/ecdh and crypto/elliptic are not linked at all.

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
)

// nativePublic is the standard library's view of a public key, parsed once.
type nativePublic struct {
	ecdsa *ecdsa.PublicKey
	ecdh  *ecdh.PublicKey
}

// parseNativePublic checks that b (65 bytes, 04 || X || Y) is a point of
// P-256 other than the identity and parses it for ECDSA and ECDH.
func parseNativePublic(b []byte) (nativePublic, error) {
	dh, err := ecdh.P256().NewPublicKey(b)
	if err != nil {
		return nativePublic{}, err
	}
	ek, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), b)
	if err != nil {
		return nativePublic{}, err
	}
	return nativePublic{ecdsa: ek, ecdh: dh}, nil
}

// A PrivateKey is a P-256 private key: API key, session key, or HPKE receiver key.
//
// It holds the scalar once in each form the standard library needs (ECDSA for
// stamps, ECDH for bundles), parsed once at construction. It is an [ECDHKey],
// so it opens bundles with [Open] and its relatives. Its zero value is
// not usable; get one from [GenerateKey] or [NewPrivateKey]. A PrivateKey may be
// used from several goroutines, but not while [PrivateKey.Wipe] runs.
type PrivateKey struct {
	_ [0]func() // not comparable: use Bytes and crypto/subtle if you must

	scalar []byte // 32 bytes, big-endian; nil once wiped
	ecdsa  *ecdsa.PrivateKey
	dh     *ecdh.PrivateKey
	pub    *PublicKey
}

// GenerateKey returns a new random P-256 private key.
func GenerateKey() (*PrivateKey, error) {
	// The key is drawn by crypto/ecdh rather than ecdsa.GenerateKey: the same
	// uniform scalar from crypto/rand (the reader is ignored since Go 1.26),
	// while ecdsa.GenerateKey and ecdsa.PrivateKey.Bytes would link their
	// code for all four NIST curves into the wasm module.
	dh, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, internal("key generation", err)
	}
	scalar := dh.Bytes()
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), scalar)
	if err != nil {
		return nil, internal("key generation", err)
	}
	return newPrivateKey(k, dh, scalar)
}

// NewPrivateKey returns the private key with the given scalar: exactly 32 bytes,
// big-endian, with 0 < d < n. The slice is copied.
func NewPrivateKey(scalar []byte) (*PrivateKey, error) {
	if len(scalar) != 32 {
		return nil, wrap(ErrInvalidPrivateKey, "scalar must be 32 bytes")
	}
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), scalar)
	if err != nil {
		return nil, wrap(ErrInvalidPrivateKey, "scalar out of range")
	}
	dh, err := ecdh.P256().NewPrivateKey(scalar)
	if err != nil {
		return nil, wrap(ErrInvalidPrivateKey, "scalar out of range")
	}
	return newPrivateKey(k, dh, append([]byte(nil), scalar...))
}

// newPrivateKey joins the ECDSA and ECDH forms of one scalar. It takes
// ownership of scalar.
func newPrivateKey(k *ecdsa.PrivateKey, dh *ecdh.PrivateKey, scalar []byte) (*PrivateKey, error) {
	// Copy the public half so that the public key does not keep the ecdsa private
	// key (and the standard library's cached copy of the scalar) reachable.
	ecdsaPub := k.PublicKey
	pub := &PublicKey{nativePublic: nativePublic{ecdsa: &ecdsaPub, ecdh: dh.PublicKey()}}
	copy(pub.raw[:], dh.PublicKey().Bytes())
	return &PrivateKey{scalar: scalar, ecdsa: k, dh: dh, pub: pub}, nil
}

// Bytes returns a copy of the 32-byte big-endian scalar, or nil if the key was wiped.
// The caller should overwrite the copy when done with it.
func (k *PrivateKey) Bytes() []byte {
	if k.scalar == nil {
		return nil
	}
	return append([]byte(nil), k.scalar...)
}

// PublicKey returns the public key of k. It remains usable after [PrivateKey.Wipe].
func (k *PrivateKey) PublicKey() *PublicKey {
	if k == nil {
		return nil
	}
	return k.pub
}

// Wipe overwrites the copies of the scalar this package holds and makes k unusable:
// signing, opening and [PrivateKey.Bytes] fail afterwards. Copies held inside the
// standard library (its ECDH key and signing cache) cannot be reached and are left
// to the garbage collector.
func (k *PrivateKey) Wipe() {
	clear(k.scalar)
	k.scalar = nil
	if k.ecdsa != nil && k.ecdsa.D != nil {
		clear(k.ecdsa.D.Bits())
		k.ecdsa.D.SetInt64(0)
	}
	k.ecdsa = nil
	k.dh = nil
}

// ECDH returns the X coordinate of k times peer (32 bytes): the
// Diffie-Hellman step of DHKEM(P-256) on the recipient side.
func (k *PrivateKey) ECDH(peer *PublicKey) ([]byte, error) {
	if !k.usable() {
		return nil, wrap(ErrInvalidPrivateKey, "key is nil or wiped")
	}
	if peer == nil {
		return nil, wrap(ErrInvalidPublicKey, "nil peer")
	}
	return k.dh.ECDH(peer.ecdh)
}

// String describes k by its public key, never printing the scalar.
func (k *PrivateKey) String() string {
	if k == nil || k.pub == nil {
		return "walletcrypto.PrivateKey(nil)"
	}
	return "walletcrypto.PrivateKey(" + k.pub.CompressedHex() + ")"
}

// GoString is String, so that %#v does not print the scalar either.
func (k *PrivateKey) GoString() string { return k.String() }

// usable reports whether k can still sign and decrypt.
func (k *PrivateKey) usable() bool { return k != nil && k.scalar != nil }
