package walletcrypto

import "encoding/hex"

// TargetBundleVersion is the only envelope version.
const TargetBundleVersion = "v1.0.0"

// A TargetBundle is the signed enclave envelope of the OTP flow
// (otpEncryptionTargetBundle): a JSON string
//
//	{"version":"v1.0.0","data":"<hex of data JSON>","dataSignature":"<DER hex>","enclaveQuorumPublic":"<130 hex>"}
//
// whose data is the JSON {"targetPublic":"<130 hex>", …} and whose dataSignature is
// ECDSA P-256 by enclaveQuorumPublic over SHA-256 of the data bytes (not the hex).
type TargetBundle struct {
	Version             string
	Data                []byte // the signed bytes: the data JSON
	DataSignature       []byte // ASN.1 DER
	EnclaveQuorumPublic *PublicKey
	TargetPublic        *PublicKey // from Data
}

// Encode returns the JSON form of b, keys in the order version, data,
// dataSignature, enclaveQuorumPublic, hex in lower case. TargetPublic is not
// written separately: it is inside Data. b.EnclaveQuorumPublic must not be nil.
func (b *TargetBundle) Encode() string {
	return string(appendFlat(nil, flatObject{
		{"version", b.Version},
		{"data", hex.EncodeToString(b.Data)},
		{"dataSignature", hex.EncodeToString(b.DataSignature)},
		{"enclaveQuorumPublic", b.EnclaveQuorumPublic.UncompressedHex()},
	}))
}

// ParseTargetBundle parses the envelope without checking its signature; use
// [VerifyTargetBundle] for that. It requires exactly the four keys, version
// [TargetBundleVersion], hex data holding a flat JSON object with a targetPublic
// of 130 hex characters (other string members such as organizationId and userId
// are ignored), a strict DER dataSignature (see [ParseDERSignature]) and an
// enclaveQuorumPublic of 130 hex characters. Hex may be upper or lower case.
func ParseTargetBundle(s string) (*TargetBundle, error) {
	o, err := parseFlat([]byte(s))
	if err != nil {
		return nil, err
	}
	if err := onlyKeys(o, "version", "data", "dataSignature", "enclaveQuorumPublic"); err != nil {
		return nil, err
	}
	version, _ := o.get("version")
	if version != TargetBundleVersion {
		return nil, malformed("target bundle: unsupported version " + quote(version))
	}
	dataHex, _ := o.get("data")
	data, err := decodeHex(dataHex)
	if err != nil {
		return nil, malformed("target bundle: data is not hex")
	}
	target, err := parseTargetData(data)
	if err != nil {
		return nil, err
	}
	sigHex, _ := o.get("dataSignature")
	sig, err := decodeHex(sigHex)
	if err != nil {
		return nil, malformed("target bundle: dataSignature is not hex")
	}
	if _, err := parseDER(sig); err != nil {
		return nil, err
	}
	signerHex, _ := o.get("enclaveQuorumPublic")
	signer, err := parseUncompressedHex(signerHex, "target bundle: enclaveQuorumPublic")
	if err != nil {
		return nil, err
	}
	return &TargetBundle{
		Version:             version,
		Data:                data,
		DataSignature:       sig,
		EnclaveQuorumPublic: signer,
		TargetPublic:        target,
	}, nil
}

// parseTargetData reads targetPublic from the data JSON.
func parseTargetData(data []byte) (*PublicKey, error) {
	o, err := parseFlat(data)
	if err != nil {
		return nil, wrapCause(ErrMalformed, "target bundle: data is not a flat JSON object", err)
	}
	if err := missingKey(o, "targetPublic"); err != nil {
		return nil, err
	}
	targetHex, _ := o.get("targetPublic")
	return parseUncompressedHex(targetHex, "target bundle: targetPublic")
}

// parseUncompressedHex parses a 130-hex uncompressed point; what names it in errors.
func parseUncompressedHex(s, what string) (*PublicKey, error) {
	if !IsUncompressedHex(s) {
		return nil, malformed(what + " must be 130 hex characters starting 04")
	}
	p, err := ParsePublicKeyHex(s)
	if err != nil {
		return nil, wrapCause(ErrMalformed, what+" is not a P-256 point", err)
	}
	return p, nil
}

// VerifyTargetBundleWith parses the envelope s, checks that its
// enclaveQuorumPublic is pinnedSigner (as points, whatever the hex case) and
// that dataSignature verifies with b (high S accepted), and returns
// targetPublic, the key to seal the OTP to. A different signer gives
// [ErrSignerMismatch]; a bad signature [ErrInvalidSignature].
func VerifyTargetBundleWith(b Verifier, s string, pinnedSigner *PublicKey) (target *PublicKey, err error) {
	if pinnedSigner == nil {
		return nil, wrap(ErrSignerMismatch, "no pinned signer")
	}
	tb, err := ParseTargetBundle(s)
	if err != nil {
		return nil, err
	}
	if !tb.EnclaveQuorumPublic.Equal(pinnedSigner) {
		return nil, ErrSignerMismatch
	}
	if !b.VerifyECDSA(tb.EnclaveQuorumPublic, tb.Data, tb.DataSignature) {
		return nil, ErrInvalidSignature
	}
	return tb.TargetPublic, nil
}
