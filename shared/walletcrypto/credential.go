package walletcrypto

// Credential bundles carry session keys (the spec's encryptedSessionSigningKey)
// and Turnkey's email-auth, recovery and OAuth credentials:
//
//	base58check( enc (33 bytes, compressed) || ciphertext )

// SealCredentialBundleWith seals plaintext to recipient (see [SealWith]) and
// returns the credential-bundle form.
func SealCredentialBundleWith(b KeySource, recipient *PublicKey, plaintext []byte) (string, error) {
	enc, ct, err := SealWith(b, recipient, plaintext)
	if err != nil {
		return "", err
	}
	// enc is 04 || X || Y from the standard library; compress it (SEC 1 §2.3.3).
	payload := make([]byte, 0, 33+len(ct))
	payload = append(payload, 2|enc[64]&1)
	payload = append(payload, enc[1:33]...)
	payload = append(payload, ct...)
	return Base58CheckEncode(payload), nil
}

// OpenCredentialBundle decodes a credential bundle and opens it with recipient.
// The decoded payload must be longer than the 33-byte encapsulated key.
func OpenCredentialBundle(recipient ECDHKey, s string) ([]byte, error) {
	payload, err := Base58CheckDecode(s)
	if err != nil {
		return nil, err
	}
	if len(payload) <= 33 {
		return nil, malformed("credential bundle: too short")
	}
	return Open(recipient, payload[:33], payload[33:])
}
