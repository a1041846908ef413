//go:build !js

package walletcrypto

import (
	"bytes"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"testing"

	circl "github.com/cloudflare/circl/hpke"
	"github.com/mr-tron/base58"
)

// circl is the independent second HPKE implementation (go-sdk uses it).
var circlSuite = circl.NewSuite(circl.KEM_P256_HKDF_SHA256, circl.KDF_HKDF_SHA256, circl.AEAD_AES256GCM)

func isErr(err, target error) bool { return errors.Is(err, target) }

// circlSeal seals with circl, with rnd as the sender's randomness.
func circlSeal(t testing.TB, to *PublicKey, pt []byte, rnd io.Reader) (enc, ct []byte) {
	t.Helper()
	pkR := to.Uncompressed()
	pk, err := circl.KEM_P256_HKDF_SHA256.Scheme().UnmarshalBinaryPublicKey(pkR)
	if err != nil {
		t.Fatal(err)
	}
	sender, err := circlSuite.NewSender(pk, []byte("turnkey_hpke"))
	if err != nil {
		t.Fatal(err)
	}
	enc, sealer, err := sender.Setup(rnd)
	if err != nil {
		t.Fatal(err)
	}
	ct, err = sealer.Seal(pt, append(append([]byte{}, enc...), pkR...))
	if err != nil {
		t.Fatal(err)
	}
	return enc, ct
}

// circlOpen opens with circl; enc is 65 bytes.
func circlOpen(t testing.TB, k *PrivateKey, enc, ct []byte) []byte {
	t.Helper()
	sk, err := circl.KEM_P256_HKDF_SHA256.Scheme().UnmarshalBinaryPrivateKey(k.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	pkR, _ := sk.Public().MarshalBinary()
	recv, err := circlSuite.NewReceiver(sk, []byte("turnkey_hpke"))
	if err != nil {
		t.Fatal(err)
	}
	opener, err := recv.Setup(enc)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := opener.Open(ct, append(append([]byte{}, enc...), pkR...))
	if err != nil {
		t.Fatalf("circl cannot open: %v", err)
	}
	return pt
}

// Independent encodings for the tests: base58check from mr-tron + sha256, and
// point compression through crypto/elliptic.
func testBase58Check(payload []byte) string {
	s1 := sha256.Sum256(payload)
	s2 := sha256.Sum256(s1[:])
	return base58.Encode(append(append([]byte{}, payload...), s2[:4]...))
}

func testBase58CheckDecode(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base58.Decode(s)
	if err != nil || len(b) < 4 {
		t.Fatalf("base58 %q: %v", s, err)
	}
	payload := b[:len(b)-4]
	s1 := sha256.Sum256(payload)
	s2 := sha256.Sum256(s1[:])
	if !bytes.Equal(s2[:4], b[len(b)-4:]) {
		t.Fatal("checksum mismatch")
	}
	return payload
}

func testCompress(t testing.TB, u []byte) []byte {
	t.Helper()
	//lint:ignore SA1019 independent test oracle
	x, y := elliptic.Unmarshal(elliptic.P256(), u)
	if x == nil {
		t.Fatal("not a point")
	}
	return elliptic.MarshalCompressed(elliptic.P256(), x, y)
}

func testDecompress(t testing.TB, c []byte) []byte {
	t.Helper()
	//lint:ignore SA1019 independent test oracle
	x, y := elliptic.UnmarshalCompressed(elliptic.P256(), c)
	if x == nil {
		t.Fatal("not a point")
	}
	//lint:ignore SA1019 independent test oracle
	return elliptic.Marshal(elliptic.P256(), x, y)
}

var interopPlaintexts = map[string][]byte{
	"empty":      {},
	"scalar":     bytes.Repeat([]byte{0xa5}, 32),
	"otp":        []byte(`{"otp_code":"123456","public_key":"02f739f8c77b32f4d5f13265861febd76e7a9c61a1140d296b8c16302508870316"}`),
	"multiblock": bytes.Repeat([]byte("0123456789abcdef"), 70),
}

func TestInteropCredentialBundle(t *testing.T) {
	k := mustGenerateKey(t)
	for name, pt := range interopPlaintexts {
		t.Run("circl→ours/"+name, func(t *testing.T) {
			enc, ct := circlSeal(t, k.PublicKey(), pt, rand.Reader)
			bundle := testBase58Check(append(testCompress(t, enc), ct...))
			got, err := OpenCredentialBundle(k, bundle)
			if err != nil || !bytes.Equal(got, pt) {
				t.Fatalf("OpenCredentialBundle = %x, %v", got, err)
			}
		})
		t.Run("ours→circl/"+name, func(t *testing.T) {
			bundle, err := SealCredentialBundle(k.PublicKey(), pt)
			if err != nil {
				t.Fatal(err)
			}
			payload := testBase58CheckDecode(t, bundle)
			if len(payload) != 33+len(pt)+16 {
				t.Fatalf("payload is %d bytes", len(payload))
			}
			got := circlOpen(t, k, testDecompress(t, payload[:33]), payload[33:])
			if !bytes.Equal(got, pt) {
				t.Fatalf("circl opened %x", got)
			}
		})
	}
}

// jsonBundle is the JSON HPKE form as encoding/json sees it.
type jsonBundle struct {
	EncappedPublic string `json:"encappedPublic"`
	Ciphertext     string `json:"ciphertext"`
}

func TestInteropJSONBundle(t *testing.T) {
	k := mustGenerateKey(t)
	for name, pt := range interopPlaintexts {
		t.Run("circl→ours/"+name, func(t *testing.T) {
			enc, ct := circlSeal(t, k.PublicKey(), pt, rand.Reader)
			js, err := json.Marshal(jsonBundle{hex.EncodeToString(enc), hex.EncodeToString(ct)})
			if err != nil {
				t.Fatal(err)
			}
			got, err := OpenBundle(k, string(js))
			if err != nil || !bytes.Equal(got, pt) {
				t.Fatalf("OpenBundle = %x, %v", got, err)
			}
			b, err := ParseBundle(string(js))
			if err != nil || b.Encode() != string(js) {
				t.Fatalf("Encode() = %s, want encoding/json's %s (%v)", b.Encode(), js, err)
			}
		})
		t.Run("ours→circl/"+name, func(t *testing.T) {
			s, err := SealBundle(k.PublicKey(), pt)
			if err != nil {
				t.Fatal(err)
			}
			var jb jsonBundle
			dec := json.NewDecoder(bytes.NewReader([]byte(s)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&jb); err != nil {
				t.Fatal(err)
			}
			got := circlOpen(t, k, mustHex(t, jb.EncappedPublic), mustHex(t, jb.Ciphertext))
			if !bytes.Equal(got, pt) {
				t.Fatalf("circl opened %x", got)
			}
		})
	}
}

// TestInteropSealOpen covers the raw Seal/Open pair against circl.
func TestInteropSealOpen(t *testing.T) {
	k := mustGenerateKey(t)
	pt := []byte("hello")
	enc, ct, err := Seal(k.PublicKey(), pt)
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) != 65 || enc[0] != 4 || len(ct) != len(pt)+16 {
		t.Fatalf("enc %d bytes, ct %d bytes", len(enc), len(ct))
	}
	if got := circlOpen(t, k, enc, ct); !bytes.Equal(got, pt) {
		t.Fatal("circl mismatch")
	}
	enc2, ct2 := circlSeal(t, k.PublicKey(), pt, rand.Reader)
	if got, err := Open(k, enc2, ct2); err != nil || !bytes.Equal(got, pt) {
		t.Fatalf("Open = %q, %v", got, err)
	}
}
