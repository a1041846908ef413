package walletcrypto

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
)

// HPKEInfo is the HPKE info string of every bundle (RFC 9180 §5.1).
const HPKEInfo = "turnkey_hpke"

var hpkeInfo = []byte(HPKEInfo)

// This file is the one RFC 9180 implementation of the wallet: base mode,
// DHKEM(P-256, HKDF-SHA256), HKDF-SHA256 and AES-256-GCM, one message per
// context (sequence number 0). It is written over two small interfaces for
// the only step that touches a private key, Diffie-Hellman, so that the key
// can be a Go crypto/ecdh key (the service, host tests: [PrivateKey]) or a
// non-extractable WebCrypto key (the wasm module). Everything else (the
// labeled HKDF key schedule and AES-GCM) runs here on public values and the
// DH output.

// An ECDHKey is a P-256 private key that can do the Diffie-Hellman step of
// DHKEM and nothing more: the recipient key of [Open], or an ephemeral key of
// [SealWith].
type ECDHKey interface {
	// PublicKey returns the key's public half.
	PublicKey() *PublicKey
	// ECDH returns the X coordinate (32 bytes, big-endian) of the key's
	// scalar times peer.
	ECDH(peer *PublicKey) ([]byte, error)
}

// A KeySource supplies a fresh ephemeral key for each seal.
type KeySource interface {
	// GenerateECDH returns a new random key for one seal.
	GenerateECDH() (ECDHKey, error)
}

// A Verifier checks the ECDSA P-256 signatures of signed envelopes.
type Verifier interface {
	// VerifyECDSA reports whether der, a DER ECDSA signature (already
	// checked by [ParseDERSignature]), verifies over SHA-256(message) with
	// pub. High-S signatures must verify.
	VerifyECDSA(pub *PublicKey, message, der []byte) bool
}

// A Backend supplies the P-256 operations that need a curve implementation:
// fresh ephemeral keys for sealing ([KeySource]) and ECDSA verification of
// signed envelopes ([Verifier]). The host build's is the standard library
// ([Native]; the package-level functions without "With" use it); the wasm
// module verifies with WebCrypto and seals with keys WebCrypto made.
type Backend interface {
	KeySource
	Verifier
}

// RFC 9180 identifiers (§7): KEM 0x0010, KDF 0x0001, AEAD 0x0002 (AES-256-GCM);
// 0x0001 (AES-128-GCM) exists only so that the RFC's own vectors, which use
// it, can test this code.
const (
	kemP256       = 0x0010
	kdfSHA256     = 0x0001
	aeadAES128GCM = 0x0001
	aeadAES256GCM = 0x0002
)

// suite is an HPKE ciphersuite of DHKEM(P-256, HKDF-SHA256) and HKDF-SHA256.
type suite struct {
	aead uint16 // aeadAES128GCM or aeadAES256GCM
	info []byte
}

// bundleSuite is the suite of every bundle.
var bundleSuite = suite{aead: aeadAES256GCM, info: hpkeInfo}

func (s suite) keyLen() int {
	if s.aead == aeadAES128GCM {
		return 16
	}
	return 32
}

var (
	kemSuiteID = []byte{'K', 'E', 'M', kemP256 >> 8, kemP256 & 0xff}
	hpkeLabel  = []byte("HPKE-v1")
)

func (s suite) hpkeSuiteID() []byte {
	return []byte{'H', 'P', 'K', 'E', kemP256 >> 8, kemP256 & 0xff, kdfSHA256 >> 8, kdfSHA256 & 0xff, byte(s.aead >> 8), byte(s.aead)}
}

// SealWith encrypts plaintext to recipient with HPKE base mode (RFC 9180 §6.1)
// in the bundle suite: DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM,
// info [HPKEInfo], and AAD = enc || recipient, both 65-byte uncompressed
// points. The ephemeral key comes from b. It returns the 65-byte uncompressed
// encapsulated key and the ciphertext (plaintext + 16-byte tag). Each call
// uses a fresh ephemeral key, so each bundle holds exactly one message.
func SealWith(b KeySource, recipient *PublicKey, plaintext []byte) (enc, ciphertext []byte, err error) {
	if recipient == nil {
		return nil, nil, wrap(ErrInvalidPublicKey, "nil recipient")
	}
	eph, err := b.GenerateECDH()
	if err != nil {
		return nil, nil, internal("ephemeral key", err)
	}
	return bundleSuite.seal(eph, recipient, plaintext, nil)
}

// Open decrypts a ciphertext made by [SealWith] (or by Turnkey's SDKs). enc is
// the encapsulated key, 65 bytes uncompressed or 33 bytes compressed; a
// compressed enc is decompressed first, since the AAD always holds the
// uncompressed form. A wrong key or tampered input gives an error wrapping
// [ErrDecrypt].
func Open(recipient ECDHKey, enc, ciphertext []byte) ([]byte, error) {
	if recipient == nil || recipient.PublicKey() == nil {
		return nil, wrap(ErrInvalidPrivateKey, "no recipient key")
	}
	encKey, err := ParsePublicKey(enc)
	if err != nil {
		return nil, wrapCause(ErrDecrypt, "invalid encapsulated key", err)
	}
	return bundleSuite.open(recipient, encKey, ciphertext, additionalData(encKey, recipient.PublicKey()))
}

// seal is Encap (RFC 9180 §4.1) with the ephemeral key eph, the key schedule
// and one AEAD seal. aad nil means the bundles' AAD, enc || recipient.
func (s suite) seal(eph ECDHKey, recipient *PublicKey, plaintext, aad []byte) (enc, ciphertext []byte, err error) {
	ephPub := eph.PublicKey()
	if ephPub == nil {
		return nil, nil, internal("ephemeral key", ErrInvalidPublicKey)
	}
	dh, err := eph.ECDH(recipient)
	if err != nil {
		return nil, nil, internal("key agreement", err)
	}
	defer clear(dh)
	aead, nonce, err := s.context(dh, ephPub, recipient)
	if err != nil {
		return nil, nil, err
	}
	if aad == nil {
		aad = additionalData(ephPub, recipient)
	}
	return ephPub.Uncompressed(), aead.Seal(nil, nonce, plaintext, aad), nil
}

// open is Decap (RFC 9180 §4.1) with recipient, the key schedule and one
// AEAD open.
func (s suite) open(recipient ECDHKey, enc *PublicKey, ciphertext, aad []byte) ([]byte, error) {
	dh, err := recipient.ECDH(enc)
	if errors.Is(err, ErrInvalidPrivateKey) {
		return nil, err // a wiped key: the caller's mistake, not the input's
	}
	if err != nil {
		return nil, wrapCause(ErrDecrypt, "key agreement failed", err)
	}
	defer clear(dh)
	aead, nonce, err := s.context(dh, enc, recipient.PublicKey())
	if err != nil {
		return nil, err
	}
	plaintext, err := aead.Open(nil, nonce, ciphertext, aad)
	if err != nil {
		return nil, wrapCause(ErrDecrypt, "authentication failed", err)
	}
	return plaintext, nil
}

// context turns the DH output into the AEAD and its nonce for sequence
// number 0 (see [suite.schedule]).
func (s suite) context(dh []byte, enc, recipient *PublicKey) (cipher.AEAD, []byte, error) {
	key, nonce := s.schedule(dh, enc, recipient)
	defer clear(key)
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, nil, internal("aes", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, nil, internal("gcm", err)
	}
	return aead, nonce, nil
}

// schedule derives the AEAD key and base nonce from the DH output: DHKEM's
// ExtractAndExpand (§4.1) with kem_context = enc || pkR, then KeySchedule
// (§5.1) in base mode with an empty PSK.
func (s suite) schedule(dh []byte, enc, recipient *PublicKey) (key, nonce []byte) {
	kemContext := make([]byte, 0, 130)
	kemContext = append(kemContext, enc.raw[:]...)
	kemContext = append(kemContext, recipient.raw[:]...)
	eaePRK := labeledExtract(kemSuiteID, nil, "eae_prk", dh)
	defer clear(eaePRK)
	shared := labeledExpand(kemSuiteID, eaePRK, "shared_secret", kemContext, 32)
	defer clear(shared)

	id := s.hpkeSuiteID()
	ksContext := bundleKSContext
	if s.aead != bundleSuite.aead || !bytes.Equal(s.info, bundleSuite.info) {
		ksContext = s.keyScheduleContext()
	}
	secret := labeledExtract(id, shared, "secret", nil)
	defer clear(secret)
	return labeledExpand(id, secret, "key", ksContext, s.keyLen()), labeledExpand(id, secret, "base_nonce", ksContext, 12)
}

// keyScheduleContext is KeySchedule's key_schedule_context (§5.1) in base
// mode with an empty PSK id: it depends on the suite and info only.
func (s suite) keyScheduleContext() []byte {
	id := s.hpkeSuiteID()
	c := make([]byte, 0, 65)
	c = append(c, 0) // mode_base
	c = append(c, labeledExtract(id, nil, "psk_id_hash", nil)...)
	return append(c, labeledExtract(id, nil, "info_hash", s.info)...)
}

// bundleKSContext is the bundle suite's key_schedule_context, computed once:
// two of the seven HMACs of a seal or an open.
var bundleKSContext = bundleSuite.keyScheduleContext()

// labeledExtract is LabeledExtract (§4): HKDF-Extract(salt,
// "HPKE-v1" || suite_id || label || ikm).
func labeledExtract(suiteID, salt []byte, label string, ikm []byte) []byte {
	if salt == nil {
		salt = make([]byte, sha256.Size) // HKDF: an absent salt is HashLen zeros
	}
	m := hmac.New(sha256.New, salt)
	m.Write(hpkeLabel)
	m.Write(suiteID)
	m.Write([]byte(label))
	m.Write(ikm)
	return m.Sum(nil)
}

// labeledExpand is LabeledExpand (§4): HKDF-Expand(prk, I2OSP(L, 2) ||
// "HPKE-v1" || suite_id || label || info, L), for L ≤ 255 · 32.
func labeledExpand(suiteID, prk []byte, label string, info []byte, length int) []byte {
	labeled := binary.BigEndian.AppendUint16(nil, uint16(length))
	labeled = append(labeled, hpkeLabel...)
	labeled = append(labeled, suiteID...)
	labeled = append(labeled, label...)
	labeled = append(labeled, info...)
	return hkdfExpand(prk, labeled, length)
}

// hkdfExpand is HKDF-Expand with SHA-256 (RFC 5869 §2.3).
func hkdfExpand(prk, info []byte, length int) []byte {
	var m hash.Hash = hmac.New(sha256.New, prk)
	out := make([]byte, 0, length+sha256.Size)
	var t []byte
	for i := byte(1); len(out) < length; i++ {
		m.Reset()
		m.Write(t)
		m.Write(info)
		m.Write([]byte{i})
		clear(t)
		t = m.Sum(nil)
		out = append(out, t...)
	}
	clear(t)
	clear(out[length:])
	return out[:length]
}

// additionalData returns enc || recipient, both uncompressed (130 bytes).
func additionalData(enc, recipient *PublicKey) []byte {
	aad := make([]byte, 0, 130)
	aad = append(aad, enc.raw[:]...)
	return append(aad, recipient.raw[:]...)
}
