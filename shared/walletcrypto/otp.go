package walletcrypto

// The OTP plaintext is what the client seals to the target bundle's targetPublic:
//
//	{"otp_code":"<code>","public_key":"<hex>"}
//
// with the keys in that order and no whitespace (JSON.stringify of the JS SDK's object).

// OTPPlaintext returns the OTP plaintext bytes for code and the client's public key hex.
// The strings are written as given (escaped only where JSON requires it).
func OTPPlaintext(code string, clientPublicKeyHex string) []byte {
	return appendFlat(nil, flatObject{
		{"otp_code", code},
		{"public_key", clientPublicKeyHex},
	})
}

// ParseOTPPlaintext parses an OTP plaintext. It requires exactly the keys otp_code
// (non-empty) and public_key (66 or 130 hex characters, a P-256 point), in any order.
func ParseOTPPlaintext(b []byte) (code string, publicKey *PublicKey, err error) {
	o, err := parseFlat(b)
	if err != nil {
		return "", nil, err
	}
	if err := onlyKeys(o, "otp_code", "public_key"); err != nil {
		return "", nil, err
	}
	code, _ = o.get("otp_code")
	if code == "" {
		return "", nil, malformed("otp: empty otp_code")
	}
	pubHex, _ := o.get("public_key")
	publicKey, err = ParsePublicKeyHex(pubHex)
	if err != nil {
		return "", nil, wrapCause(ErrMalformed, "otp: public_key is not a hex P-256 point", err)
	}
	return code, publicKey, nil
}

// SealOTPWith seals the OTP plaintext for code and client (written as
// client.UncompressedHex()) to target, and returns the JSON HPKE form: the
// encryptedOtpBundle string of verifyOtp. Get target from
// [VerifyTargetBundleWith].
func SealOTPWith(b KeySource, target *PublicKey, code string, client *PublicKey) (string, error) {
	if client == nil {
		return "", wrap(ErrInvalidPublicKey, "nil client key")
	}
	return SealBundleWith(b, target, OTPPlaintext(code, client.UncompressedHex()))
}
