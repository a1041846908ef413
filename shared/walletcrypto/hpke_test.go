package walletcrypto

import (
	"bytes"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hpke"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"testing"
)

// These tests run in both builds (the wasm one under Node: make wasm-test),
// so the one HPKE implementation is proven where the module uses it too.
// The backend here is the standard library's crypto/ecdh, reached only
// through the package's interfaces.

// ecdhKey is an ECDHKey over a crypto/ecdh key, written for the tests only
// from the public API, so it works in the wasm build as well.
type ecdhKey struct{ k *ecdh.PrivateKey }

func (e ecdhKey) PublicKey() *PublicKey {
	p, err := ParsePublicKey(e.k.PublicKey().Bytes())
	if err != nil {
		panic(err)
	}
	return p
}

func (e ecdhKey) ECDH(peer *PublicKey) ([]byte, error) {
	pk, err := ecdh.P256().NewPublicKey(peer.Uncompressed())
	if err != nil {
		return nil, err
	}
	return e.k.ECDH(pk)
}

// stdBackend is a Backend of crypto/ecdh and crypto/ecdsa; eph, when set,
// is the ephemeral key every seal uses (for known-answer vectors).
type stdBackend struct{ eph *ecdh.PrivateKey }

func (b stdBackend) GenerateECDH() (ECDHKey, error) {
	if b.eph != nil {
		return ecdhKey{b.eph}, nil
	}
	k, err := ecdh.P256().GenerateKey(nil)
	return ecdhKey{k}, err
}

func (stdBackend) VerifyECDSA(pub *PublicKey, message, der []byte) bool {
	k, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pub.Uncompressed())
	if err != nil {
		return false
	}
	d := sha256.Sum256(message)
	return ecdsa.VerifyASN1(k, d[:], der)
}

// mustHex decodes s or fails the test. It is here, in a file of both
// builds, so that the wasm build's tests have it too.
func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func ecdhPrivate(t testing.TB, hexScalar string) *ecdh.PrivateKey {
	t.Helper()
	k, err := ecdh.P256().NewPrivateKey(mustHex(t, hexScalar))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestRFC9180Vectors runs the RFC's own test vectors for base mode with
// DHKEM(P-256, HKDF-SHA256) and HKDF-SHA256, with AES-128-GCM and
// AES-256-GCM (testdata/rfc9180_p256.json, taken from the CFRG vector file
// that circl ships): the key schedule, the encapsulated key, and the first
// encryption, sealed and opened.
func TestRFC9180Vectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/rfc9180_p256.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct {
		AEAD        uint16 `json:"aead_id"`
		Info        string `json:"info"`
		SkEm        string `json:"skEm"`
		SkRm        string `json:"skRm"`
		PkEm        string `json:"pkEm"`
		PkRm        string `json:"pkRm"`
		Enc         string `json:"enc"`
		Key         string `json:"key"`
		BaseNonce   string `json:"base_nonce"`
		Encryptions []struct {
			AAD   string `json:"aad"`
			Nonce string `json:"nonce"`
			PT    string `json:"pt"`
			CT    string `json:"ct"`
		} `json:"encryptions"`
	}
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) != 2 {
		t.Fatalf("%d vectors, want AES-128-GCM and AES-256-GCM", len(vectors))
	}
	for _, v := range vectors {
		t.Run("aead="+hex.EncodeToString([]byte{byte(v.AEAD)}), func(t *testing.T) {
			s := suite{aead: v.AEAD, info: mustHex(t, v.Info)}
			eph := ecdhKey{ecdhPrivate(t, v.SkEm)}
			rcpt := ecdhKey{ecdhPrivate(t, v.SkRm)}
			if got := eph.PublicKey().UncompressedHex(); got != v.PkEm {
				t.Fatalf("pkEm %s, want %s", got, v.PkEm)
			}
			if got := rcpt.PublicKey().UncompressedHex(); got != v.PkRm {
				t.Fatalf("pkRm %s, want %s", got, v.PkRm)
			}
			dh, err := eph.ECDH(rcpt.PublicKey())
			if err != nil {
				t.Fatal(err)
			}
			key, nonce := s.schedule(dh, eph.PublicKey(), rcpt.PublicKey())
			if hex.EncodeToString(key) != v.Key || hex.EncodeToString(nonce) != v.BaseNonce {
				t.Fatalf("key %x nonce %x, want %s %s", key, nonce, v.Key, v.BaseNonce)
			}
			e := v.Encryptions[0]
			if e.Nonce != v.BaseNonce {
				t.Fatal("the first encryption must use the base nonce")
			}
			enc, ct, err := s.seal(eph, rcpt.PublicKey(), mustHex(t, e.PT), mustHex(t, e.AAD))
			if err != nil {
				t.Fatal(err)
			}
			if hex.EncodeToString(enc) != v.Enc || hex.EncodeToString(ct) != e.CT {
				t.Fatalf("seal: enc %x ct %x, want %s %s", enc, ct, v.Enc, e.CT)
			}
			encKey, err := ParsePublicKey(enc)
			if err != nil {
				t.Fatal(err)
			}
			pt, err := s.open(rcpt, encKey, mustHex(t, e.CT), mustHex(t, e.AAD))
			if err != nil || hex.EncodeToString(pt) != e.PT {
				t.Fatalf("open: %x, %v; want %s", pt, err, e.PT)
			}
			tampered := mustHex(t, e.CT)
			tampered[0] ^= 1
			if _, err := s.open(rcpt, encKey, tampered, mustHex(t, e.AAD)); !isDecrypt(err) {
				t.Fatalf("tampered ciphertext: %v", err)
			}
		})
	}
}

func isDecrypt(err error) bool { return errors.Is(err, ErrDecrypt) }

// stdlibSuite is the standard library's crypto/hpke in the bundle suite.
func stdlibSuite() (hpke.KEM, hpke.KDF, hpke.AEAD) {
	return hpke.DHKEM(ecdh.P256()), hpke.HKDFSHA256(), hpke.AES256GCM()
}

// TestStdlibInterop seals with this package and opens with the standard
// library's crypto/hpke, and the other way round, with the bundles' info
// and AAD, for several plaintext sizes.
func TestStdlibInterop(t *testing.T) {
	kem, kdf, aead := stdlibSuite()
	for _, n := range []int{0, 1, 32, 105, 1000} {
		pt := bytes.Repeat([]byte{byte(n)}, n)
		rk, err := ecdh.P256().GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		rcpt := ecdhKey{rk}
		pkR := rcpt.PublicKey().Uncompressed()

		// Ours -> standard library.
		enc, ct, err := SealWith(stdBackend{}, rcpt.PublicKey(), pt)
		if err != nil {
			t.Fatal(err)
		}
		sk, err := kem.NewPrivateKey(rk.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		r, err := hpke.NewRecipient(enc, sk, kdf, aead, []byte(HPKEInfo))
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Open(append(append([]byte{}, enc...), pkR...), ct)
		if err != nil || !bytes.Equal(got, pt) {
			t.Fatalf("%d bytes: crypto/hpke opened %x, %v", n, got, err)
		}

		// Standard library -> ours.
		pk, err := kem.NewPublicKey(pkR)
		if err != nil {
			t.Fatal(err)
		}
		enc2, s, err := hpke.NewSender(pk, kdf, aead, []byte(HPKEInfo))
		if err != nil {
			t.Fatal(err)
		}
		ct2, err := s.Seal(append(append([]byte{}, enc2...), pkR...), pt)
		if err != nil {
			t.Fatal(err)
		}
		got, err = Open(rcpt, enc2, ct2)
		if err != nil || !bytes.Equal(got, pt) {
			t.Fatalf("%d bytes: Open of a crypto/hpke seal = %x, %v", n, got, err)
		}
		// The compressed encapsulated key of credential bundles opens too.
		c := append([]byte{2 | enc2[64]&1}, enc2[1:33]...)
		if got, err := Open(rcpt, c, ct2); err != nil || !bytes.Equal(got, pt) {
			t.Fatalf("%d bytes: Open with compressed enc = %x, %v", n, got, err)
		}
	}
}

// TestTurnkeyCredentialVectorAnyBuild opens the SDK's credential bundle and
// the fixed-ephemeral vector (wallet-crypto facts §8) through the ECDHKey
// interface, and reproduces the second one with a fixed ephemeral key.
func TestTurnkeyCredentialVectorAnyBuild(t *testing.T) {
	rcpt := ecdhKey{ecdhPrivate(t, "20fa65df11f24833790ae283fc9a0c215eecbbc589549767977994dc69d05a56")}
	got, err := OpenCredentialBundle(rcpt, "w99a5xV6A75TfoAUkZn869fVyDYvgVsKrawMALZXmrauZd8hEv66EkPU1Z42CUaHESQjcA5bqd8dynTGBMLWB9ewtXWPEVbZvocB4Tw2K1vQVp7uwjf")
	if err != nil || hex.EncodeToString(got) != "67ee05fc3bdf4161bc70701c221d8d77180294cefcfcea64ba83c4d4c732fcb9" {
		t.Fatalf("SDK bundle: %x, %v", got, err)
	}
	const oracle = "PbHxRnobuyWPSwBkf1aJv2MeGBjXx6BWbGK4D13EvQUJF7Wimv9QThQgKgM2cBuEk1qFnFLkWbvDfiQ5Ce5h34K3G9U9hg4n"
	if got, err := OpenCredentialBundle(rcpt, oracle); err != nil || string(got) != "turnkey oracle kat" {
		t.Fatalf("oracle bundle: %q, %v", got, err)
	}
	fixed := stdBackend{eph: ecdhPrivate(t, "1111111111111111111111111111111111111111111111111111111111111111")}
	b, err := SealCredentialBundleWith(fixed, rcpt.PublicKey(), []byte("turnkey oracle kat"))
	if err != nil || b != oracle {
		t.Fatalf("sealed %s, %v; want %s", b, err, oracle)
	}
}
