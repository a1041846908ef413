//go:build !js

package walletcrypto

import (
	"bytes"
	"crypto/ecdh"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"testing"

	circl "github.com/cloudflare/circl/hpke"
	"github.com/mr-tron/base58"
)

func TestKATAPIKey(t *testing.T) {
	v := loadKAT(t)
	k := mustPrivateKey(t, v.APIKey.Private)
	if got := k.PublicKey().CompressedHex(); got != v.APIKey.PublicCompressed {
		t.Fatalf("public key = %s, want %s", got, v.APIKey.PublicCompressed)
	}
	if got := hex.EncodeToString(k.Bytes()); got != v.APIKey.Private {
		t.Fatalf("Bytes() = %s", got)
	}
}

func TestKATCredentialBundle(t *testing.T) {
	v := loadKAT(t)
	k := mustPrivateKey(t, v.CredentialBundle.ReceiverPrivate)
	pt, err := OpenCredentialBundle(k, v.CredentialBundle.Bundle)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(pt); got != v.CredentialBundle.Plaintext {
		t.Fatalf("plaintext = %s, want %s", got, v.CredentialBundle.Plaintext)
	}
	// The SDK's vector is a session key bundle: its plaintext is a P-256 scalar.
	sk, err := OpenSessionKey(k, v.CredentialBundle.Bundle)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(sk.Bytes()); got != v.CredentialBundle.Plaintext {
		t.Fatalf("session key = %s", got)
	}
	// Another key cannot open it.
	if _, err := OpenCredentialBundle(mustGenerateKey(t), v.CredentialBundle.Bundle); !isErr(err, ErrDecrypt) {
		t.Fatalf("wrong key: err = %v, want ErrDecrypt", err)
	}
}

func TestKATStamp(t *testing.T) {
	v := loadKAT(t)
	k := mustPrivateKey(t, v.Stamp.Private)
	sig := mustHex(t, v.Stamp.SignatureDER)
	// The JS stamper's signature, in a stamp built by hand in JS key order.
	header := b64(`{"publicKey":"` + k.PublicKey().CompressedHex() + `","scheme":"` + StampScheme + `","signature":"` + v.Stamp.SignatureDER + `"}`)
	st, err := ParseStamp(header)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Verify([]byte(v.Stamp.Payload)); err != nil {
		t.Fatalf("KAT stamp does not verify: %v", err)
	}
	if st.Encode() != header {
		t.Fatalf("Encode() = %s, want %s", st.Encode(), header)
	}
	if !bytes.Equal(st.Signature, sig) {
		t.Fatal("signature changed in parsing")
	}
	// This signature happens to have a high S (noble uses lowS: false).
	_, s, err := ParseDERSignature(sig)
	if err != nil {
		t.Fatal(err)
	}
	if s.Cmp(halfN) <= 0 {
		t.Fatal("expected the KAT signature to be high-S")
	}
	if err := st.Verify([]byte(v.Stamp.Payload + " ")); !isErr(err, ErrInvalidSignature) {
		t.Fatalf("changed payload: err = %v", err)
	}
}

func TestKATFixedEphemeralOpen(t *testing.T) {
	v := loadKAT(t).FixedEphemeralHPKE
	k := mustPrivateKey(t, v.ReceiverPrivate)
	pt, err := OpenCredentialBundle(k, v.Bundle)
	if err != nil {
		t.Fatal(err)
	}
	if string(pt) != v.Plaintext {
		t.Fatalf("plaintext = %q, want %q", pt, v.Plaintext)
	}
	// The same ciphertext in the JSON form, and through Open with either enc form.
	enc, err := ParsePublicKey(mustHex(t, v.EncCompressed))
	if err != nil {
		t.Fatal(err)
	}
	ct := mustHex(t, v.Ciphertext)
	js := Bundle{EncappedPublic: enc.Uncompressed(), Ciphertext: ct}.Encode()
	if pt, err := OpenBundle(k, js); err != nil || string(pt) != v.Plaintext {
		t.Fatalf("OpenBundle = %q, %v", pt, err)
	}
	if pt, err := Open(k, enc.Compressed(), ct); err != nil || string(pt) != v.Plaintext {
		t.Fatalf("Open(compressed enc) = %q, %v", pt, err)
	}
}

// TestKATFixedEphemeralReproduce rebuilds the fixed-ephemeral vector byte for byte.
//
// circl's Sender.Setup cannot do it: it reads a seed and runs DeriveKeyPair on it
// (RFC 9180 §7.1.3), while the vector's 0x11… is the ephemeral scalar itself (as
// @hpke/core's fixed ekm is). So this test runs the RFC 9180 base-mode schedule
// (§4.1, §5.1, §5.2) by hand on circl's HKDF and AEAD primitives and crypto/ecdh,
// independently of crypto/hpke and of this package. TestCirclSetupIsDeterministic
// covers circl's own seeded path.
func TestKATFixedEphemeralReproduce(t *testing.T) {
	v := loadKAT(t).FixedEphemeralHPKE
	skE, err := ecdh.P256().NewPrivateKey(mustHex(t, v.EphemeralPrivate))
	if err != nil {
		t.Fatal(err)
	}
	receiver := mustPrivateKey(t, v.ReceiverPrivate)
	enc, ct := rfc9180SealP256(t, skE, receiver.PublicKey().Uncompressed(), []byte(HPKEInfo), []byte(v.Plaintext))

	encC := append([]byte{2 | enc[64]&1}, enc[1:33]...)
	if got := hex.EncodeToString(encC); got != v.EncCompressed {
		t.Fatalf("enc = %s, want %s", got, v.EncCompressed)
	}
	if got := hex.EncodeToString(ct); got != v.Ciphertext {
		t.Fatalf("ciphertext = %s, want %s", got, v.Ciphertext)
	}
	payload := append(encC, ct...)
	sum1 := sha256.Sum256(payload)
	sum2 := sha256.Sum256(sum1[:])
	if got := base58.Encode(append(payload, sum2[:4]...)); got != v.Bundle {
		t.Fatalf("bundle (independent base58check) = %s, want %s", got, v.Bundle)
	}
	if got := Base58CheckEncode(payload); got != v.Bundle {
		t.Fatalf("Base58CheckEncode = %s, want %s", got, v.Bundle)
	}
}

// TestCirclSetupIsDeterministic checks circl's seeded sender (RFC 9180 DeriveKeyPair
// from the reader's 32 bytes): the same seed gives the same bundle, its enc is the
// derived key, not the seed as a scalar, and Open reads it.
func TestCirclSetupIsDeterministic(t *testing.T) {
	v := loadKAT(t).FixedEphemeralHPKE
	receiver := mustPrivateKey(t, v.ReceiverPrivate)
	seed := mustHex(t, v.EphemeralPrivate)
	enc1, ct1 := circlSeal(t, receiver.PublicKey(), []byte(v.Plaintext), bytes.NewReader(seed))
	enc2, ct2 := circlSeal(t, receiver.PublicKey(), []byte(v.Plaintext), bytes.NewReader(seed))
	if !bytes.Equal(enc1, enc2) || !bytes.Equal(ct1, ct2) {
		t.Fatal("circl Setup is not deterministic given its reader")
	}
	derived, _ := circl.KEM_P256_HKDF_SHA256.Scheme().DeriveKeyPair(seed)
	want, _ := derived.MarshalBinary()
	if !bytes.Equal(enc1, want) {
		t.Fatalf("circl enc = %x, want DeriveKeyPair(seed) = %x", enc1, want)
	}
	if got := hex.EncodeToString(enc1[1:33]); got == v.EncCompressed[2:] {
		t.Fatal("circl used the seed as the scalar; the KAT reproduction comment is stale")
	}
	pt, err := Open(receiver, enc1, ct1)
	if err != nil || string(pt) != v.Plaintext {
		t.Fatalf("Open = %q, %v", pt, err)
	}
}

func TestKATPinnedKeys(t *testing.T) {
	for name, h := range loadKAT(t).PinnedKeys {
		p, err := ParsePublicKeyHex(h)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := p.UncompressedHex(); len(h) == 130 && got != h {
			t.Errorf("%s: re-encodes to %s", name, got)
		}
		if got := p.CompressedHex(); len(h) == 66 && got != h {
			t.Errorf("%s: re-encodes to %s", name, got)
		}
	}
}

// rfc9180SealP256 is HPKE base mode, DHKEM(P-256, HKDF-SHA256), HKDF-SHA256,
// AES-256-GCM, with a given ephemeral key and AAD = enc || pkR. Test oracle only.
func rfc9180SealP256(t *testing.T, skE *ecdh.PrivateKey, pkR, info, pt []byte) (enc, ct []byte) {
	t.Helper()
	kdf := circl.KDF_HKDF_SHA256
	labeledExtract := func(suite []byte, salt []byte, label string, ikm []byte) []byte {
		in := append(append(append([]byte("HPKE-v1"), suite...), label...), ikm...)
		return kdf.Extract(in, salt)
	}
	labeledExpand := func(suite []byte, prk []byte, label string, info []byte, n uint16) []byte {
		in := binary.BigEndian.AppendUint16(nil, n)
		in = append(append(append(append(in, "HPKE-v1"...), suite...), label...), info...)
		return kdf.Expand(prk, in, uint(n))
	}
	kemSuite := []byte("KEM\x00\x10")
	hpkeSuite := []byte("HPKE\x00\x10\x00\x01\x00\x02")

	pkRKey, err := ecdh.P256().NewPublicKey(pkR)
	if err != nil {
		t.Fatal(err)
	}
	dh, err := skE.ECDH(pkRKey) // the X coordinate, 32 bytes
	if err != nil {
		t.Fatal(err)
	}
	enc = skE.PublicKey().Bytes()
	kemContext := append(append([]byte{}, enc...), pkR...)
	eaePRK := labeledExtract(kemSuite, nil, "eae_prk", dh)
	sharedSecret := labeledExpand(kemSuite, eaePRK, "shared_secret", kemContext, 32)

	pskIDHash := labeledExtract(hpkeSuite, nil, "psk_id_hash", nil)
	infoHash := labeledExtract(hpkeSuite, nil, "info_hash", info)
	ctx := append(append([]byte{0}, pskIDHash...), infoHash...)
	secret := labeledExtract(hpkeSuite, sharedSecret, "secret", nil)
	key := labeledExpand(hpkeSuite, secret, "key", ctx, 32)
	nonce := labeledExpand(hpkeSuite, secret, "base_nonce", ctx, 12)

	aead, err := circl.AEAD_AES256GCM.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return enc, aead.Seal(nil, nonce, pt, append(append([]byte{}, enc...), pkR...))
}
