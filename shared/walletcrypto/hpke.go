package walletcrypto

import (
	"crypto/hpke"
)

// HPKEInfo is the HPKE info string of every bundle (RFC 9180 §5.1).
const HPKEInfo = "turnkey_hpke"

var hpkeInfo = []byte(HPKEInfo)

// Seal encrypts plaintext to recipient with HPKE base mode (RFC 9180 §6.1):
// DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM, info [HPKEInfo], and
// AAD = enc || recipient, both 65-byte uncompressed points. It returns the
// 65-byte uncompressed encapsulated key and the ciphertext (plaintext + 16-byte tag).
// Each call uses a fresh ephemeral key, so each bundle holds exactly one message.
func Seal(recipient *PublicKey, plaintext []byte) (enc, ciphertext []byte, err error) {
	if recipient == nil {
		return nil, nil, wrap(ErrInvalidPublicKey, "nil recipient")
	}
	pk, err := hpke.NewDHKEMPublicKey(recipient.ecdh)
	if err != nil {
		return nil, nil, internal("hpke public key", err)
	}
	enc, sender, err := hpke.NewSender(pk, hpke.HKDFSHA256(), hpke.AES256GCM(), hpkeInfo)
	if err != nil {
		return nil, nil, internal("hpke sender", err)
	}
	ciphertext, err = sender.Seal(additionalData(enc, recipient), plaintext)
	if err != nil {
		return nil, nil, internal("hpke seal", err)
	}
	return enc, ciphertext, nil
}

// Open decrypts a ciphertext made by [Seal] (or by Turnkey's SDKs). enc is the
// encapsulated key, 65 bytes uncompressed or 33 bytes compressed; a compressed
// enc is decompressed first, since the AAD always holds the uncompressed form.
// A wrong key or tampered input gives an error wrapping [ErrDecrypt].
func Open(recipient *PrivateKey, enc, ciphertext []byte) ([]byte, error) {
	if !recipient.usable() {
		return nil, wrap(ErrInvalidPrivateKey, "key is nil or wiped")
	}
	encKey, err := ParsePublicKey(enc)
	if err != nil {
		return nil, wrapCause(ErrDecrypt, "invalid encapsulated key", err)
	}
	enc65 := encKey.raw[:]
	r, err := hpke.NewRecipient(enc65, recipient.hpke, hpke.HKDFSHA256(), hpke.AES256GCM(), hpkeInfo)
	if err != nil {
		return nil, wrapCause(ErrDecrypt, "key agreement failed", err)
	}
	plaintext, err := r.Open(additionalData(enc65, recipient.pub), ciphertext)
	if err != nil {
		return nil, wrapCause(ErrDecrypt, "authentication failed", err)
	}
	return plaintext, nil
}

// additionalData returns enc || recipient, both uncompressed (130 bytes).
func additionalData(enc65 []byte, recipient *PublicKey) []byte {
	aad := make([]byte, 0, 130)
	aad = append(aad, enc65...)
	return append(aad, recipient.raw[:]...)
}
