//go:build !js

package walletcrypto

import (
	"strings"
	"testing"
)

func TestOTPPlaintext(t *testing.T) {
	u := fixturePubU(t)
	if got, want := string(OTPPlaintext("123456", u)), `{"otp_code":"123456","public_key":"`+u+`"}`; got != want {
		t.Fatalf("OTPPlaintext = %s\nwant %s", got, want)
	}
	if got, want := string(OTPPlaintext(`a"b\`, fixturePubC)), `{"otp_code":"a\"b\\","public_key":"`+fixturePubC+`"}`; got != want {
		t.Fatalf("escaping: %s", got)
	}
}

func TestParseOTPPlaintext(t *testing.T) {
	u := fixturePubU(t)
	tests := []struct {
		name, in string
		code     string // "" means: must fail
	}{
		{"canonical uncompressed", `{"otp_code":"123456","public_key":"` + u + `"}`, "123456"},
		{"canonical compressed", `{"otp_code":"123456","public_key":"` + fixturePubC + `"}`, "123456"},
		{"other key order", `{"public_key":"` + u + `","otp_code":"000001"}`, "000001"},
		{"whitespace", "{ \"otp_code\" : \"42\" ,\n\"public_key\":\"" + fixturePubC + "\"}", "42"},
		{"escaped code", `{"otp_code":"a\"b","public_key":"` + fixturePubC + `"}`, `a"b`},
		{"upper-case key hex", `{"otp_code":"1","public_key":"` + strings.ToUpper(u) + `"}`, "1"},
		{"unknown key", `{"otp_code":"1","public_key":"` + u + `","extra":"x"}`, ""},
		{"missing public_key", `{"otp_code":"1"}`, ""},
		{"missing otp_code", `{"public_key":"` + u + `"}`, ""},
		{"empty code", `{"otp_code":"","public_key":"` + u + `"}`, ""},
		{"numeric code", `{"otp_code":123456,"public_key":"` + u + `"}`, ""},
		{"camelCase keys", `{"otpCode":"1","publicKey":"` + u + `"}`, ""},
		{"duplicate key", `{"otp_code":"1","otp_code":"2","public_key":"` + u + `"}`, ""},
		{"short key", `{"otp_code":"1","public_key":"` + fixturePubC[:64] + `"}`, ""},
		{"key off curve", `{"otp_code":"1","public_key":"` + offCurveHex(u) + `"}`, ""},
		{"not JSON", `otp_code=1`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, pub, err := ParseOTPPlaintext([]byte(tt.in))
			if tt.code == "" {
				if err == nil || code != "" || pub != nil || !isErr(err, ErrMalformed) {
					t.Fatalf("ParseOTPPlaintext = %q, %v, %v; want an error", code, pub, err)
				}
				return
			}
			if err != nil || code != tt.code || !pub.Equal(mustPrivateKey(t, fixturePriv).PublicKey()) {
				t.Fatalf("ParseOTPPlaintext = %q, %v, %v", code, pub, err)
			}
		})
	}
}

func TestSealOTP(t *testing.T) {
	signer := mustGenerateKey(t)
	targetKey := mustGenerateKey(t)
	client := mustGenerateKey(t)
	tb, err := NewTargetBundle(signer, targetKey.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	// Client side.
	target, err := VerifyTargetBundle(tb, signer.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := SealOTP(target, "987654", client.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	// Service side.
	pt, err := OpenBundle(targetKey, sealed)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"otp_code":"987654","public_key":"` + client.PublicKey().UncompressedHex() + `"}`; string(pt) != want {
		t.Fatalf("plaintext = %s", pt)
	}
	code, pub, err := ParseOTPPlaintext(pt)
	if err != nil || code != "987654" || !pub.Equal(client.PublicKey()) {
		t.Fatalf("ParseOTPPlaintext = %q, %v, %v", code, pub, err)
	}
	if _, err := SealOTP(target, "1", nil); !isErr(err, ErrInvalidPublicKey) {
		t.Fatalf("nil client: %v", err)
	}
}
