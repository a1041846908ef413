package walletcrypto

// The export bundle is the encryptedWalletCredentials of a wallet export: the
// signed enclave envelope of the target bundle,
//
//	{"version":"v1.0.0","data":"<hex>","dataSignature":"<DER hex>","enclaveQuorumPublic":"<130 hex>"}
//
// whose data is the JSON bytes
//
//	{"encappedPublic":"<130 hex>","ciphertext":"<hex>","organizationId":"<id>"}
//
// carrying the wallet's secret (a BIP-39 mnemonic) HPKE-sealed (see [Seal]) to
// the client's one-time key. It is what Turnkey's decryptExportBundle opens.

// OpenExportBundleWith checks an export bundle and opens it with recipient, the
// private half of the one-time key the export was requested for. It returns
// the organizationId named in the data, for the caller to compare with the
// one it expects, and the plaintext.
//
// The envelope must have exactly the four keys, version [TargetBundleVersion],
// a strict DER dataSignature and a 130-hex enclaveQuorumPublic equal to
// pinnedSigner (else [ErrSignerMismatch]); the signature must verify with b over
// SHA-256 of the data bytes (else [ErrInvalidSignature]). Only then is data
// read: a flat JSON object with exactly encappedPublic (130 hex, a P-256
// point), ciphertext (hex, at least 16 bytes) and organizationId. Hex may be
// upper or lower case. A bundle with empty dataSignature and
// enclaveQuorumPublic, as the reference sandbox sends, is malformed here.
// Decryption failures wrap [ErrDecrypt]; on any error the results are empty.
func OpenExportBundleWith(b Verifier, s string, pinnedSigner *PublicKey, recipient ECDHKey) (organizationID string, plaintext []byte, err error) {
	if pinnedSigner == nil {
		return "", nil, wrap(ErrSignerMismatch, "no pinned signer")
	}
	env, err := parseEnvelope(s, "export bundle")
	if err != nil {
		return "", nil, err
	}
	if !env.EnclaveQuorumPublic.Equal(pinnedSigner) {
		return "", nil, ErrSignerMismatch
	}
	if !b.VerifyECDSA(env.EnclaveQuorumPublic, env.Data, env.DataSignature) {
		return "", nil, ErrInvalidSignature
	}
	orgID, bundle, err := parseExportData(env.Data)
	if err != nil {
		return "", nil, err
	}
	plaintext, err = Open(recipient, bundle.EncappedPublic, bundle.Ciphertext)
	if err != nil {
		return "", nil, err
	}
	return orgID, plaintext, nil
}

// parseEnvelope parses the signed envelope shared by target and export
// bundles, without looking inside data or checking the signature. TargetPublic
// is left nil. what names the bundle in errors.
func parseEnvelope(s, what string) (*TargetBundle, error) {
	o, err := parseFlat([]byte(s))
	if err != nil {
		return nil, err
	}
	if err := onlyKeys(o, "version", "data", "dataSignature", "enclaveQuorumPublic"); err != nil {
		return nil, err
	}
	version, _ := o.get("version")
	if version != TargetBundleVersion {
		return nil, malformed(what + ": unsupported version " + quote(version))
	}
	dataHex, _ := o.get("data")
	data, err := decodeHex(dataHex)
	if err != nil {
		return nil, malformed(what + ": data is not hex")
	}
	sigHex, _ := o.get("dataSignature")
	sig, err := decodeHex(sigHex)
	if err != nil {
		return nil, malformed(what + ": dataSignature is not hex")
	}
	if _, err := parseDER(sig); err != nil {
		return nil, err
	}
	signerHex, _ := o.get("enclaveQuorumPublic")
	signer, err := parseUncompressedHex(signerHex, what+": enclaveQuorumPublic")
	if err != nil {
		return nil, err
	}
	return &TargetBundle{Version: version, Data: data, DataSignature: sig, EnclaveQuorumPublic: signer}, nil
}

// parseExportData reads the data of an export bundle.
func parseExportData(data []byte) (organizationID string, b Bundle, err error) {
	o, err := parseFlat(data)
	if err != nil {
		return "", Bundle{}, wrapCause(ErrMalformed, "export bundle: data is not a flat JSON object", err)
	}
	if err := onlyKeys(o, "encappedPublic", "ciphertext", "organizationId"); err != nil {
		return "", Bundle{}, err
	}
	encHex, _ := o.get("encappedPublic")
	enc, err := parseUncompressedHex(encHex, "export bundle: encappedPublic")
	if err != nil {
		return "", Bundle{}, err
	}
	ctHex, _ := o.get("ciphertext")
	ct, err := decodeHex(ctHex)
	if err != nil {
		return "", Bundle{}, malformed("export bundle: ciphertext is not hex")
	}
	if len(ct) < 16 {
		return "", Bundle{}, malformed("export bundle: ciphertext shorter than the AEAD tag")
	}
	organizationID, _ = o.get("organizationId")
	return organizationID, Bundle{EncappedPublic: enc.Uncompressed(), Ciphertext: ct}, nil
}
