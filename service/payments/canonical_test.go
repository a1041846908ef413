package payments

import (
	"bytes"
	"testing"
)

func TestCanonicalBodyHash(t *testing.T) {
	base := `{"type":"EMAIL_OTP","encryptedOtpBundle":"{\"a\":1}"}`
	same := []string{
		`{ "encryptedOtpBundle" : "{\"a\":1}", "type":"EMAIL_OTP" }`,
		"\n" + base + "\n",
		`{"type":"EMAIL_OTP","encryptedOtpBundle":"{\u0022a\u0022:1}"}`,
	}
	different := []string{
		`{"type":"EMAIL_OTP","encryptedOtpBundle":"{\"a\":2}"}`,
		`{"type":"EMAIL_OTP"}`,
		`{"type":"EMAIL_OTP","encryptedOtpBundle":"{\"a\":1}","extra":null}`,
		`{"n":1.0}`,
		``,
	}
	want, err := CanonicalBodyHash([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range same {
		got, err := CanonicalBodyHash([]byte(s))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%q hashes differently from the canonical body (err %v)", s, err)
		}
	}
	for _, s := range different {
		got, err := CanonicalBodyHash([]byte(s))
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if bytes.Equal(got, want) {
			t.Errorf("%q hashes like a different body", s)
		}
	}
	// Numbers keep their written form: 1 and 1.0 are different bodies.
	a, _ := CanonicalBodyHash([]byte(`{"n":1}`))
	b, _ := CanonicalBodyHash([]byte(`{"n":1.0}`))
	if bytes.Equal(a, b) {
		t.Error("1 and 1.0 hash the same")
	}
	if _, err := CanonicalBodyHash([]byte(`{"n":`)); err == nil {
		t.Error("malformed JSON hashed")
	}
}

func TestValidEmail(t *testing.T) {
	tests := map[string]bool{
		"a@example.com":            true,
		"first.last+tag@sub.ex.io": true,
		"noat":                     false,
		"a@localhost":              false,
		"Ada <a@example.com>":      false,
		"a@example.com.":           false,
		" a@example.com":           false,
		"":                         false,
	}
	for in, want := range tests {
		if got := validEmail(in); got != want {
			t.Errorf("validEmail(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestCanonicalBodyHashRefusesTrailingText: the hash is of one JSON value;
// a body with more after it has none (decoding refuses such a body too).
func TestCanonicalBodyHashRefusesTrailingText(t *testing.T) {
	for _, body := range []string{`{"a":1}}`, `{"a":1} {"b":2}`, `{"a":1}x`} {
		if _, err := CanonicalBodyHash([]byte(body)); err == nil {
			t.Errorf("%s: hashed", body)
		}
	}
	if _, err := CanonicalBodyHash([]byte(" {\"a\":1} \n")); err != nil {
		t.Error(err)
	}
}
