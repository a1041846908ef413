package walletcrypto

// Credential bundles carry session keys (the spec's encryptedSessionSigningKey)
// and Turnkey's email-auth, recovery and OAuth credentials:
//
//	base58check( enc (33 bytes, compressed) || ciphertext )

// SealCredentialBundle seals plaintext to recipient (see [Seal]) and returns the
// credential-bundle form.
func SealCredentialBundle(recipient *PublicKey, plaintext []byte) (string, error) {
	enc, ct, err := Seal(recipient, plaintext)
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
func OpenCredentialBundle(recipient *PrivateKey, s string) ([]byte, error) {
	payload, err := Base58CheckDecode(s)
	if err != nil {
		return nil, err
	}
	if len(payload) <= 33 {
		return nil, malformed("credential bundle: too short")
	}
	return Open(recipient, payload[:33], payload[33:])
}

// SealSessionKey seals the 32-byte scalar of session to recipient as a
// credential bundle: the encryptedSessionSigningKey of the legacy
// (uncompressed clientPublicKey) login flow.
func SealSessionKey(recipient *PublicKey, session *PrivateKey) (string, error) {
	if !session.usable() {
		return "", wrap(ErrInvalidPrivateKey, "session key is nil or wiped")
	}
	scalar := session.Bytes()
	defer clear(scalar)
	return SealCredentialBundle(recipient, scalar)
}

// OpenSessionKey opens a bundle made by [SealSessionKey] and returns the session key.
func OpenSessionKey(recipient *PrivateKey, s string) (*PrivateKey, error) {
	scalar, err := OpenCredentialBundle(recipient, s)
	if err != nil {
		return nil, err
	}
	defer clear(scalar)
	return NewPrivateKey(scalar)
}
