package payments

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"time"

	"paywallet/shared/walletcrypto"
)

// verificationToken is the payloadToSign of EMAIL_OTP leg 1: an ES256 JWT
// (RFC 7519, JWS compact form) signed by the service's signer key, whose
// claims bind the OTP issuance, the e-mail and the client key sealed in the
// bundle. The client stamps these exact bytes; the service compares the
// stamp's key with the bound key, and anyone holding the pinned signer key
// can check the token was issued by this service. exp is milliseconds since
// the epoch as a string, as the reference's tokens carry it (wallet-crypto-facts §3.5).
func (s *Service) verificationToken(otpID, email string, client *walletcrypto.PublicKey, now, expires time.Time) (string, error) {
	header, err := json.Marshal(map[string]string{"alg": "ES256", "kid": s.signer.PublicKey().CompressedHex(), "typ": "JWT"})
	if err != nil {
		return "", err
	}
	claims, err := json.Marshal(map[string]any{
		"id":                otpID,
		"verification_type": "OTP_TYPE_EMAIL",
		"contact":           email,
		"public_key":        client.CompressedHex(),
		"iat":               now.Unix(),
		"exp":               strconv.FormatInt(expires.UnixMilli(), 10),
	})
	if err != nil {
		return "", err
	}
	signingInput := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(claims)
	key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), s.signer.Bytes())
	if err != nil {
		return "", err
	}
	digest := sha256.Sum256([]byte(signingInput))
	r, sig, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		return "", err
	}
	raw := make([]byte, 64)
	r.FillBytes(raw[:32])
	sig.FillBytes(raw[32:])
	return signingInput + "." + base64.RawURLEncoding.EncodeToString(raw), nil
}
