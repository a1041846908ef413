package webhooksig

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

func newEd25519(t testing.TB) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestVerifyStandard follows the spec's verification: the timestamp within
// the tolerance, any v1a entry by any trusted key, entries of other
// versions and malformed ones skipped.
func TestVerifyStandard(t *testing.T) {
	// A fixed key, so that the entry's base64 has a '+' or '/' for the
	// URL-alphabet case.
	key, other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32)), newEd25519(t)
	pub, otherPub := key.Public().(ed25519.PublicKey), other.Public().(ed25519.PublicKey)
	now := time.Unix(1_800_000_000, 0)
	const ts = "1800000000"
	entry, err := SignStandard(key, hookID, now.Unix(), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	byOther, _ := SignStandard(other, hookID, now.Unix(), []byte(body))
	raw := mustB64(strings.TrimPrefix(entry, "v1a,"))
	if base64.URLEncoding.EncodeToString(raw) == base64.StdEncoding.EncodeToString(raw) {
		t.Fatal("pick another seed: the entry reads the same in both alphabets")
	}
	hmacLike := "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="
	keys := []ed25519.PublicKey{otherPub, pub}
	cases := []struct {
		name, id, ts, sig, body string
		keys                    []ed25519.PublicKey
		now                     time.Time
		want                    error
	}{
		{"valid", hookID, ts, entry, body, keys, now, nil},
		{"valid at the tolerance's end", hookID, ts, entry, body, keys, now.Add(Tolerance), nil},
		{"valid with the clock behind", hookID, ts, entry, body, keys, now.Add(-Tolerance), nil},
		{"among other versions and garbage", hookID, ts, hmacLike + " v2,abc  nocomma v1a,!!! " + entry + " v1a,", body, keys, now, nil},
		{"second of two entries", hookID, ts, byOther + " " + entry, body, []ed25519.PublicKey{pub}, now, nil},
		{"surrounding spaces", hookID, ts, " " + entry + " ", body, keys, now, nil},
		{"too old", hookID, ts, entry, body, keys, now.Add(Tolerance + time.Second), ErrTimestamp},
		{"from the future", hookID, ts, entry, body, keys, now.Add(-Tolerance - time.Second), ErrTimestamp},
		{"body changed", hookID, ts, entry, body + " ", keys, now, ErrSignature},
		{"id changed", hookID + "0", ts, entry, body, keys, now, ErrSignature},
		{"timestamp changed", hookID, "1800000001", entry, body, keys, now, ErrSignature},
		{"by an untrusted key", hookID, ts, byOther, body, []ed25519.PublicKey{pub}, now, ErrSignature},
		{"no trusted key", hookID, ts, entry, body, nil, now, ErrUnknownKey},
		{"a key of the wrong length", hookID, ts, entry, body, []ed25519.PublicKey{pub[:31]}, now, ErrSignature},
		{"only HMAC entries", hookID, ts, hmacLike, body, keys, now, ErrSignature},
		{"empty v1a entry", hookID, ts, "v1a,", body, keys, now, ErrSignature},
		{"v1a unpadded", hookID, ts, strings.TrimRight(entry, "="), body, keys, now, ErrSignature},
		{"v1a URL alphabet", hookID, ts, "v1a," + base64.URLEncoding.EncodeToString(raw), body, keys, now, ErrSignature},
		{"v1a of 63 bytes", hookID, ts, "v1a," + base64.StdEncoding.EncodeToString(raw[:63]), body, keys, now, ErrSignature},
		{"V1A upper case", hookID, ts, "V1A" + strings.TrimPrefix(entry, "v1a"), body, keys, now, ErrSignature},
		{"empty signature header", hookID, ts, "", body, keys, now, ErrMalformed},
		{"blank signature header", hookID, ts, "   ", body, keys, now, ErrMalformed},
		{"overlong signature header", hookID, ts, entry + strings.Repeat(" ", 2048), body, keys, now, ErrMalformed},
		{"no id", "", ts, entry, body, keys, now, ErrMalformed},
		{"id with a dot", "msg.1", ts, entry, body, keys, now, ErrMalformed},
		{"id with a space", "msg 1", ts, entry, body, keys, now, ErrMalformed},
		{"id of 257 bytes", strings.Repeat("a", 257), ts, entry, body, keys, now, ErrMalformed},
		{"no timestamp", hookID, "", entry, body, keys, now, ErrMalformed},
		{"signed timestamp", hookID, "+1800000000", entry, body, keys, now, ErrMalformed},
		{"fractional timestamp", hookID, "1800000000.5", entry, body, keys, now, ErrMalformed},
		{"timestamp out of range", hookID, "99999999999999999999", entry, body, keys, now, ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := VerifyStandard(c.id, c.ts, c.sig, []byte(c.body), c.keys, c.now); !is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
		})
	}
}

func TestSignStandardRefuses(t *testing.T) {
	key := newEd25519(t)
	for _, id := range []string{"", "a.b", "a\nb", "é", strings.Repeat("a", 257)} {
		if _, err := SignStandard(key, id, 1, nil); !errors.Is(err, ErrMalformed) {
			t.Errorf("id %q: %v", id, err)
		}
	}
	if _, err := SignStandard(key[:32], "a", 1, nil); !errors.Is(err, ErrKey) {
		t.Errorf("short key: %v", err)
	}
}

// TestStandardKeys: whpk_ and whsk_ round trip and are told apart.
func TestStandardKeys(t *testing.T) {
	key := newEd25519(t)
	pub := key.Public().(ed25519.PublicKey)
	pk, sk := StandardPublicKey(pub), StandardSecretKey(key)
	if !strings.HasPrefix(pk, "whpk_") || len(pk) != 5+44 || !strings.HasPrefix(sk, "whsk_") || len(sk) != 5+44 {
		t.Fatalf("%s %s", pk, sk)
	}
	if got, err := ParseStandardPublicKey(pk); err != nil || !got.Equal(pub) {
		t.Fatalf("public: %v", err)
	}
	if got, err := ParseStandardSecretKey(sk); err != nil || !got.Equal(key) {
		t.Fatalf("secret: %v", err)
	}
	enc := strings.TrimPrefix(pk, "whpk_")
	for _, bad := range []string{enc, sk, "whsec_" + enc, "whpk_" + strings.TrimRight(enc, "="), "whpk_" + base64.StdEncoding.EncodeToString(pub[:31]), "whpk_", ""} {
		if _, err := ParseStandardPublicKey(bad); !errors.Is(err, ErrKey) {
			t.Errorf("public %q: %v", bad, err)
		}
	}
	for _, bad := range []string{strings.TrimPrefix(sk, "whsk_"), pk, "whsk_" + base64.StdEncoding.EncodeToString(key)} {
		if _, err := ParseStandardSecretKey(bad); !errors.Is(err, ErrKey) {
			t.Errorf("secret %q: %v", bad, err)
		}
	}
}

func TestParseStandardSignature(t *testing.T) {
	a := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 64))
	b := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 64))
	cases := []struct {
		header string
		n      int // -1: malformed
	}{
		{"v1a," + a, 1},
		{"v1a," + a + " v1a," + b, 2},
		{"v1,xyz v1a," + a + "  v2a," + b, 1},
		{"v1a," + a + "\tv1a," + b, 0},
		{"nothing usable", 0},
		{"", -1},
		{strings.Repeat("v1a,"+a+" ", 30), -1},
	}
	for _, c := range cases {
		sigs, err := ParseStandardSignature(c.header)
		if c.n < 0 {
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("%q: %v", c.header, err)
			}
			continue
		}
		if err != nil || len(sigs) != c.n {
			t.Errorf("%q: %d signatures, %v", c.header, len(sigs), err)
		}
	}
}

// FuzzParseStandardSignature: the parser never panics, fails only with
// ErrMalformed, returns 64-byte signatures only, and what it returns,
// formatted as v1a entries, parses to the same list.
func FuzzParseStandardSignature(f *testing.F) {
	a := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 64))
	f.Add("v1a," + a)
	f.Add("v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= v1a," + a + " v1a,")
	f.Add("  ,, v1a v1a,= ")
	f.Fuzz(func(t *testing.T, h string) {
		sigs, err := ParseStandardSignature(h)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		if len(sigs) > strings.Count(h, "v1a,") {
			t.Fatalf("%d signatures from %q", len(sigs), h)
		}
		entries := make([]string, len(sigs))
		for i, s := range sigs {
			if len(s) != ed25519.SignatureSize {
				t.Fatalf("a %d-byte signature from %q", len(s), h)
			}
			entries[i] = "v1a," + base64.StdEncoding.EncodeToString(s)
		}
		if len(entries) == 0 {
			return
		}
		again, err := ParseStandardSignature(strings.Join(entries, " "))
		if err != nil || len(again) != len(sigs) {
			t.Fatalf("%q: formatted back, %d signatures, %v", h, len(again), err)
		}
		for i := range sigs {
			if !bytes.Equal(again[i], sigs[i]) {
				t.Fatalf("%q: signature %d changed", h, i)
			}
		}
	})
}

// FuzzVerifyStandard: whatever the headers, VerifyStandard never panics and
// accepts only a signature of the trusted key over exactly what it was
// given.
func FuzzVerifyStandard(f *testing.F) {
	seed := bytes.Repeat([]byte{7}, 32)
	key := ed25519.NewKeyFromSeed(seed)
	pub := key.Public().(ed25519.PublicKey)
	entry, _ := SignStandard(key, hookID, 1_800_000_000, []byte(body))
	f.Add(hookID, "1800000000", entry, []byte(body))
	f.Add("msg_1", "1800000000", "v1,abc "+entry, []byte{})
	f.Fuzz(func(t *testing.T, id, ts, sig string, b []byte) {
		err := VerifyStandard(id, ts, sig, b, []ed25519.PublicKey{pub}, time.Unix(1_800_000_000, 0))
		if err != nil {
			return
		}
		if d := mustInt(t, ts) - 1_800_000_000; d > 300 || d < -300 {
			t.Fatalf("accepted timestamp %q", ts)
		}
		want, _ := SignStandard(key, id, mustInt(t, ts), b)
		if !strings.Contains(" "+strings.TrimSpace(sig)+" ", " "+want+" ") {
			t.Fatalf("accepted %q without the key's entry %q", sig, want)
		}
	})
}
