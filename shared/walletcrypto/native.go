//go:build !js

package walletcrypto

// The host build's side of the package: the standard library as the
// [Backend] ([Native]), and everything that needs a private key as a Go
// value: signing stamps and envelopes, sealing and opening session keys.
// The wasm module does these with WebCrypto keys instead (wasm/).

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
)

// Native is the standard library's [Backend]: ephemeral keys from
// crypto/ecdh, verification with crypto/ecdsa.
var Native Backend = nativeBackend{}

type nativeBackend struct{}

// GenerateECDH returns a new random P-256 key as an [ECDHKey].
func (nativeBackend) GenerateECDH() (ECDHKey, error) {
	dh, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return ephemeralKey{dh}, nil
}

// VerifyECDSA checks a strict DER signature over SHA-256(message).
func (nativeBackend) VerifyECDSA(pub *PublicKey, message, der []byte) bool {
	return verifyDigest(pub, sha256.Sum256(message), der)
}

// ephemeralKey is a sender's one-seal key: an ECDH key without the ECDSA
// form a [PrivateKey] carries.
type ephemeralKey struct{ k *ecdh.PrivateKey }

func (e ephemeralKey) PublicKey() *PublicKey {
	p, err := ParsePublicKey(e.k.PublicKey().Bytes())
	if err != nil {
		return nil
	}
	return p
}

func (e ephemeralKey) ECDH(peer *PublicKey) ([]byte, error) { return e.k.ECDH(peer.ecdh) }

// Seal is [SealWith] with the standard library ([Native]).
func Seal(recipient *PublicKey, plaintext []byte) (enc, ciphertext []byte, err error) {
	return SealWith(Native, recipient, plaintext)
}

// SealBundle is [SealBundleWith] with the standard library ([Native]).
func SealBundle(recipient *PublicKey, plaintext []byte) (string, error) {
	return SealBundleWith(Native, recipient, plaintext)
}

// SealCredentialBundle is [SealCredentialBundleWith] with the standard
// library ([Native]).
func SealCredentialBundle(recipient *PublicKey, plaintext []byte) (string, error) {
	return SealCredentialBundleWith(Native, recipient, plaintext)
}

// SealOTP is [SealOTPWith] with the standard library ([Native]).
func SealOTP(target *PublicKey, code string, client *PublicKey) (string, error) {
	return SealOTPWith(Native, target, code, client)
}

// VerifyTargetBundle is [VerifyTargetBundleWith] with the standard library
// ([Native]).
func VerifyTargetBundle(s string, pinnedSigner *PublicKey) (target *PublicKey, err error) {
	return VerifyTargetBundleWith(Native, s, pinnedSigner)
}

// OpenExportBundle is [OpenExportBundleWith] with the standard library
// ([Native]).
func OpenExportBundle(s string, pinnedSigner *PublicKey, recipient *PrivateKey) (organizationID string, plaintext []byte, err error) {
	return OpenExportBundleWith(Native, s, pinnedSigner, recipient)
}

// SealSessionKey seals the 32-byte scalar of session to recipient as a
// credential bundle: the encryptedSessionSigningKey of the legacy
// (uncompressed clientPublicKey) login flow.
func SealSessionKey(recipient *PublicKey, session *PrivateKey) (string, error) {
	if !session.usable() {
		return "", wrap(ErrInvalidPrivateKey, "session key is nil or wiped")
	}
	scalar := session.Bytes()
	defer clear(scalar)
	return SealCredentialBundle(recipient, scalar)
}

// OpenSessionKey opens a bundle made by [SealSessionKey] and returns the session key.
func OpenSessionKey(recipient *PrivateKey, s string) (*PrivateKey, error) {
	scalar, err := OpenCredentialBundle(recipient, s)
	if err != nil {
		return nil, err
	}
	defer clear(scalar)
	return NewPrivateKey(scalar)
}

// NewTargetBundle returns an envelope announcing target, signed by signer.
// Its data is exactly {"targetPublic":"<130 lower-case hex>"}.
func NewTargetBundle(signer *PrivateKey, target *PublicKey) (string, error) {
	if !signer.usable() {
		return "", wrap(ErrInvalidPrivateKey, "signer is nil or wiped")
	}
	if target == nil {
		return "", wrap(ErrInvalidPublicKey, "nil target")
	}
	data := appendFlat(nil, flatObject{{"targetPublic", target.UncompressedHex()}})
	digest := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, signer.ecdsa, digest[:])
	if err != nil {
		return "", internal("signing", err)
	}
	b := &TargetBundle{
		Version:             TargetBundleVersion,
		Data:                data,
		DataSignature:       sig,
		EnclaveQuorumPublic: signer.pub,
		TargetPublic:        target,
	}
	return b.Encode(), nil
}

// NewExportBundle seals plaintext to recipient, names organizationID beside
// it, and signs the result with signer. The data is written exactly as
// {"encappedPublic":…,"ciphertext":…,"organizationId":…}: that key order, no
// whitespace, lower-case hex.
func NewExportBundle(signer *PrivateKey, recipient *PublicKey, organizationID string, plaintext []byte) (string, error) {
	if !signer.usable() {
		return "", wrap(ErrInvalidPrivateKey, "signer is nil or wiped")
	}
	enc, ct, err := Seal(recipient, plaintext)
	if err != nil {
		return "", err
	}
	data := appendFlat(nil, flatObject{
		{"encappedPublic", hex.EncodeToString(enc)},
		{"ciphertext", hex.EncodeToString(ct)},
		{"organizationId", organizationID},
	})
	digest := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, signer.ecdsa, digest[:])
	if err != nil {
		return "", internal("signing", err)
	}
	env := TargetBundle{Version: TargetBundleVersion, Data: data, DataSignature: sig, EnclaveQuorumPublic: signer.pub}
	return env.Encode(), nil
}

// SignStamp signs payload with k and returns the stamp header value.
// Signatures are randomized, so two stamps of one payload differ.
func SignStamp(k *PrivateKey, payload []byte) (string, error) {
	if !k.usable() {
		return "", wrap(ErrInvalidPrivateKey, "key is nil or wiped")
	}
	digest := sha256.Sum256(payload)
	sig, err := ecdsa.SignASN1(rand.Reader, k.ecdsa, digest[:])
	if err != nil {
		return "", internal("signing", err)
	}
	return (&Stamp{PublicKey: k.pub, Scheme: StampScheme, Signature: sig}).Encode(), nil
}

// Verify checks the signature of s over SHA-256(payload) with s.PublicKey.
// High-S signatures are accepted, as WebCrypto produces them. It returns nil or
// an error wrapping [ErrInvalidSignature]. Verify does not decide whether the
// key is allowed to sign; the caller compares s.PublicKey with the session key.
func (s *Stamp) Verify(payload []byte) error {
	if s.PublicKey == nil || s.Scheme != StampScheme {
		return wrap(ErrInvalidSignature, "stamp has no key or an unsupported scheme")
	}
	if !verifyDigest(s.PublicKey, sha256.Sum256(payload), s.Signature) {
		return ErrInvalidSignature
	}
	return nil
}

// verifyDigest verifies a strict DER signature over digest.
func verifyDigest(pub *PublicKey, digest [32]byte, der []byte) bool {
	if _, err := parseDER(der); err != nil {
		return false
	}
	return ecdsa.VerifyASN1(pub.ecdsa, digest[:], der)
}
