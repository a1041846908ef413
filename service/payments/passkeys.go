package payments

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/go-webauthn/webauthn/webauthn"

	"paywallet/service/store"
	"paywallet/shared/wire"
)

// Passkeys (WebAuthn) as the reference API uses them (grid-api-facts §3.3):
//
//   - Registration: the platform's backend mints the registration challenge
//     and the browser creates the credential; POST /auth/credentials carries
//     the challenge and the attestation. The service verifies the
//     attestation here (relying party id and origins from configuration,
//     ES256 only, user verification required) and records the challenge so
//     it is accepted once.
//   - Login: POST /auth/credentials/{id}/challenge binds the client's key to
//     a canonical session-creation body whose SHA-256 (lower-case hex, used
//     as UTF-8 text) is the WebAuthn challenge; verify checks the assertion
//     against it, the stored public key and the sign counter.
//
// The WebAuthn user handle of an account is wire.WebAuthnUserHandle.

// newWebAuthn builds the relying party from the configuration.
func newWebAuthn(cfg *Config) (*webauthn.WebAuthn, error) {
	return webauthn.New(&webauthn.Config{
		RPID:          cfg.WebAuthnRPID,
		RPDisplayName: cfg.WebAuthnRPName,
		RPOrigins:     cfg.WebAuthnOrigins,
	})
}

// es256Only is the only algorithm the service accepts for passkeys: the
// wallet's signatures are P-256 everywhere.
var es256Only = []protocol.CredentialParameter{{Type: protocol.PublicKeyCredentialType, Algorithm: webauthncose.AlgES256}}

// passkeyUser adapts an account and its passkeys to webauthn.User.
type passkeyUser struct {
	handle []byte
	name   string
	creds  []webauthn.Credential
}

func (u *passkeyUser) WebAuthnID() []byte                         { return u.handle }
func (u *passkeyUser) WebAuthnName() string                       { return u.name }
func (u *passkeyUser) WebAuthnDisplayName() string                { return u.name }
func (u *passkeyUser) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// validNickname applies the reference's passkey nickname rule: 1–100
// characters after trimming; letters, numbers, spaces and . _ - ' ( ).
func validNickname(s string) bool {
	s = strings.TrimSpace(s)
	n := utf8.RuneCountInString(s)
	if n < 1 || n > 100 {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != ' ' && !strings.ContainsRune("._-'()", r) {
			return false
		}
	}
	return true
}

// checkAttestationFields names every missing or malformed member of a
// PASSKEY create body.
func checkAttestationFields(req *wire.CredentialCreateRequest, fe *fieldErrors) {
	if req.Nickname == "" {
		fe.add("nickname", "required")
	} else if !validNickname(req.Nickname) {
		fe.addConstraint("nickname", "1 to 100 characters: letters, numbers, spaces and . _ - ' ( )",
			wire.FieldConstraint{MinLength: new(1), MaxLength: new(100)})
	}
	switch raw, err := base64.RawURLEncoding.DecodeString(req.Challenge); {
	case req.Challenge == "":
		fe.add("challenge", "required")
	case err != nil:
		fe.add("challenge", "must be base64url without padding")
	case len(raw) < protocol.MinimumChallengeLength:
		fe.add("challenge", "must hold at least 16 random bytes")
	}
	a := req.Attestation
	if a == nil {
		fe.add("attestation", "required")
		return
	}
	for _, m := range []struct{ name, v string }{
		{"credentialId", a.CredentialID}, {"clientDataJson", a.ClientDataJSON}, {"attestationObject", a.AttestationObject},
	} {
		if m.v == "" {
			fe.add("attestation."+m.name, "required")
		} else if _, err := base64.RawURLEncoding.DecodeString(m.v); err != nil {
			fe.add("attestation."+m.name, "must be base64url without padding")
		}
	}
	for i, t := range a.Transports {
		switch t {
		case "usb", "nfc", "ble", "internal", "hybrid":
		default:
			fe.addConstraint("attestation.transports["+strconv.Itoa(i)+"]", "must be usb, nfc, ble, internal or hybrid",
				wire.FieldConstraint{Enum: []string{"usb", "nfc", "ble", "internal", "hybrid"}})
		}
	}
}

// verifyAttestation checks a registration response against the challenge
// in the body and the account's user handle, and returns the credential
// record to store. Every failure is 400 on the attestation field: the
// request cannot succeed as sent.
func (s *Service) verifyAttestation(req *wire.CredentialCreateRequest, handle []byte) (*webauthn.Credential, error) {
	a := req.Attestation
	resp, err := json.Marshal(map[string]any{
		"id":    a.CredentialID,
		"rawId": a.CredentialID,
		"type":  "public-key",
		"response": map[string]any{
			"clientDataJSON":    a.ClientDataJSON,
			"attestationObject": a.AttestationObject,
			"transports":        append([]string{}, a.Transports...),
		},
		"clientExtensionResults": map[string]any{},
	})
	if err != nil {
		return nil, err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(resp)
	if err != nil {
		return nil, invalidField("attestation", "not a WebAuthn registration response: "+webauthnProblem(err))
	}
	session := webauthn.SessionData{
		Challenge:        req.Challenge,
		UserID:           handle,
		UserVerification: protocol.VerificationRequired,
		CredParams:       es256Only,
	}
	cred, err := s.webauthn.CreateCredential(&passkeyUser{handle: handle}, session, parsed)
	if err != nil {
		return nil, invalidField("attestation", "the passkey could not be verified: "+webauthnProblem(err))
	}
	return cred, nil
}

// webauthnProblem is the client-safe part of a go-webauthn error: its
// details, never the developer info.
func webauthnProblem(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		return pe.Details
	}
	return "invalid"
}

// registrationChallengeHash is what the store records of a used
// registration challenge.
func registrationChallengeHash(challenge string) []byte {
	h := sha256.Sum256([]byte("webauthn-registration\x00" + challenge))
	return h[:]
}

// passkeyRecord encodes the credential record kept in the store.
func passkeyRecord(c *webauthn.Credential) ([]byte, error) { return json.Marshal(c) }

// passkeyUserOf loads the passkeys of the account as a webauthn.User.
func passkeyUserOf(accountID string, creds []store.Credential) (*passkeyUser, error) {
	handle, ok := wire.WebAuthnUserHandle(accountID)
	if !ok {
		return nil, errors.New("service: account id has no user handle")
	}
	u := &passkeyUser{handle: handle, name: accountID}
	for i := range creds {
		if creds[i].Type != wire.TypePasskey || len(creds[i].Passkey) == 0 {
			continue
		}
		var rec webauthn.Credential
		if err := json.Unmarshal(creds[i].Passkey, &rec); err != nil {
			return nil, err
		}
		rec.Authenticator.SignCount = uint32(creds[i].SignCount)
		u.creds = append(u.creds, rec)
	}
	return u, nil
}

// checkAssertionFields names every missing or malformed member of a
// passkey assertion, the member named name of the body ("assertion" of a
// PASSKEY verify, "passkeyAssertion" of a step-up's proof).
func checkAssertionFields(a *wire.PasskeyAssertion, fe *fieldErrors, name string) {
	if a == nil {
		fe.add(name, "required")
		return
	}
	for _, m := range []struct {
		name, v  string
		required bool
	}{
		{"credentialId", a.CredentialID, true}, {"clientDataJson", a.ClientDataJSON, true},
		{"authenticatorData", a.AuthenticatorData, true}, {"signature", a.Signature, true},
		{"userHandle", a.UserHandle, false},
	} {
		switch {
		case m.v == "" && m.required:
			fe.add(name+"."+m.name, "required")
		case m.v == "", m.name == "signature" && m.v == sandboxPasskeySignature:
		default:
			if _, err := base64.RawURLEncoding.DecodeString(m.v); err != nil {
				fe.add(name+"."+m.name, "must be base64url without padding")
			}
		}
	}
}

// sandboxPasskeySignature is the reference sandbox's legacy literal that
// skips the WebAuthn signature check (facts §5); sandbox mode only.
const sandboxPasskeySignature = "sandbox-valid-passkey-signature"

// verifyAssertion checks an assertion against the challenge bytes (a
// login's is the hex digest as UTF-8 text, a step-up's the raw digest) and
// the account's passkeys, and returns the
// updated credential record (sign counter advanced). A counter that did not
// advance is refused: it is the sign of a cloned authenticator.
func (s *Service) verifyAssertion(a *wire.PasskeyAssertion, challenge []byte, user *passkeyUser, credentialID string) (*webauthn.Credential, error) {
	refused := func(why string) error {
		return errorf(CodeUnauthorized, "the passkey assertion was refused: "+why)
	}
	raw, err := base64.RawURLEncoding.DecodeString(credentialID)
	if err != nil {
		return nil, err
	}
	resp, err := json.Marshal(map[string]any{
		"id":    a.CredentialID,
		"rawId": a.CredentialID,
		"type":  "public-key",
		"response": map[string]any{
			"clientDataJSON":    a.ClientDataJSON,
			"authenticatorData": a.AuthenticatorData,
			"signature":         a.Signature,
			"userHandle":        a.UserHandle,
		},
		"clientExtensionResults": map[string]any{},
	})
	if err != nil {
		return nil, err
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(resp)
	if err != nil {
		return nil, invalidField("assertion", "not a WebAuthn assertion: "+webauthnProblem(err))
	}
	session := webauthn.SessionData{
		Challenge:            base64.RawURLEncoding.EncodeToString(challenge),
		UserID:               user.handle,
		AllowedCredentialIDs: [][]byte{raw},
		UserVerification:     protocol.VerificationRequired,
	}
	cred, err := s.webauthn.ValidateLogin(user, session, parsed)
	if err != nil {
		return nil, refused(webauthnProblem(err))
	}
	if cred.Authenticator.CloneWarning {
		return nil, refused("the authenticator's signature counter did not advance (a cloned passkey?)")
	}
	return cred, nil
}

// loginChallengeHex is the PasskeyAuthChallenge challenge: lower-case hex
// SHA-256 of the canonical session-creation body.
func loginChallengeHex(body string) string {
	h := sha256.Sum256([]byte(body))
	return hex.EncodeToString(h[:])
}
