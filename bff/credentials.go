package bff

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"paywallet/shared/wire"
)

// Credentials of the signed-in wallet (passkeys, OAuth identities, the
// e-mail login) and the two logins that need no e-mail code: passkey and
// OAuth. Every call is bound to the cookie's wallet account; the browser
// never names an account.

// registrationTTL is how long a minted passkey registration challenge may
// be answered.
const registrationTTL = 5 * time.Minute

// handleRegistrationOptions is POST /api/passkeys/registration-options: the
// WebAuthn creation options for a new passkey of the signed-in wallet. The
// BFF mints the challenge (the platform backend's job in the reference
// design) and keeps it in the cookie session; POST /api/auth/credentials
// accepts only that challenge.
func (s *Server) handleRegistrationOptions(c *fiber.Ctx) error {
	cs, err := s.signedIn(c)
	if err != nil {
		return err
	}
	handle, ok := wire.WebAuthnUserHandle(cs.data.InternalAccountID)
	if !ok {
		return errInternal
	}
	creds, err := s.accountCredentials(c.UserContext(), cs.data.InternalAccountID)
	if err != nil {
		return err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return err
	}
	challenge := base64.RawURLEncoding.EncodeToString(raw)
	data := cs.data
	data.RegistrationChallenge = challenge
	data.RegistrationExpiresAt = s.now().Add(registrationTTL)
	if err := s.updateSession(c, cs, data); err != nil {
		return err
	}
	exclude := []fiber.Map{}
	for _, m := range creds {
		if m.Type == wire.TypePasskey && m.CredentialID != "" {
			exclude = append(exclude, fiber.Map{"type": "public-key", "id": m.CredentialID})
		}
	}
	return c.JSON(fiber.Map{"publicKey": fiber.Map{
		"rp":               fiber.Map{"id": s.rpID, "name": s.rpName},
		"user":             fiber.Map{"id": base64.RawURLEncoding.EncodeToString(handle), "name": cs.data.Email, "displayName": cs.data.Email},
		"challenge":        challenge,
		"pubKeyCredParams": []fiber.Map{{"type": "public-key", "alg": -7}},
		"timeout":          int(registrationTTL / time.Millisecond),
		"attestation":      "none",
		"authenticatorSelection": fiber.Map{
			"residentKey":      "preferred",
			"userVerification": "required",
		},
		"excludeCredentials": exclude,
	}})
}

// credentialBody is what the browser may send to add a credential; the
// account is the cookie's.
type credentialBody struct {
	Type        string          `json:"type"`
	AccountID   string          `json:"accountId,omitempty"`
	OIDCToken   string          `json:"oidcToken,omitempty"`
	Nickname    string          `json:"nickname,omitempty"`
	Challenge   string          `json:"challenge,omitempty"`
	Attestation json.RawMessage `json:"attestation,omitempty"`
}

// handleAddCredential is POST /api/auth/credentials, the service's signed
// retry for the cookie's wallet account. A PASSKEY body must carry the
// registration challenge this BFF minted for this browser; it is forgotten
// once the service has stored the passkey.
func (s *Server) handleAddCredential(c *fiber.Ctx) error {
	cs, err := s.signedIn(c)
	if err != nil {
		return err
	}
	var in credentialBody
	if err := decodeStrict(c.Body(), &in); err != nil {
		return &Error{Status: http.StatusBadRequest, Code: codeInvalidRequestFormat, Message: "body must be a JSON credential object"}
	}
	in.AccountID = cs.data.InternalAccountID
	if in.Type == wire.TypePasskey {
		pending := cs.data.RegistrationChallenge
		if pending == "" || !s.now().Before(cs.data.RegistrationExpiresAt) ||
			subtle.ConstantTimeCompare([]byte(pending), []byte(in.Challenge)) != 1 {
			return invalidField("challenge", "", "not the registration challenge issued to this browser, or it expired; start the registration again")
		}
	}
	header, err := forwardable(c)
	if err != nil {
		return err
	}
	header.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	body, _ := json.Marshal(in)
	r, err := s.up.do(c.UserContext(), call{method: http.MethodPost, path: "/auth/credentials", header: header, body: body})
	if err != nil {
		return s.unreachable(c.UserContext(), err)
	}
	if r.status == http.StatusCreated && in.Type == wire.TypePasskey {
		data := cs.data
		data.RegistrationChallenge, data.RegistrationExpiresAt = "", time.Time{}
		if err := s.updateSession(c, cs, data); err != nil {
			return err
		}
	}
	return writeReply(c, r)
}

// accountCredentials lists the account's credentials with the platform
// credential.
func (s *Server) accountCredentials(ctx context.Context, accountID string) ([]wire.AuthMethod, error) {
	list, err := platformList[wire.AuthMethod](ctx, s, "/auth/credentials", url.Values{"accountId": {accountID}})
	return slices.DeleteFunc(list, func(m wire.AuthMethod) bool {
		return !validID("AuthMethod", m.ID) || m.AccountID != accountID
	}), err
}

// findWallet finds the wallet account of an e-mail address without
// creating anything: the passkey and OAuth logins only sign existing
// wallets in.
func (s *Server) findWallet(ctx context.Context, email string) (customerID, accountID string, err error) {
	cust, err := s.findCustomer(ctx, strings.ToLower(email))
	if err != nil || cust == nil {
		return "", "", err
	}
	acct, err := s.walletAccount(ctx, cust.ID)
	return cust.ID, acct, err
}

// passkeyStartRequest is the body of POST /api/login/passkey/start.
// AuthMethodID picks one of several passkeys (from a previous answer).
type passkeyStartRequest struct {
	Email           string `json:"email"`
	ClientPublicKey string `json:"clientPublicKey"`
	AuthMethodID    string `json:"authMethodId,omitempty"`
}

// handlePasskeyStart is POST /api/login/passkey/start. It finds the
// wallet's passkeys; with one (or the one picked) it asks the service for a
// login challenge bound to clientPublicKey and keeps the pending login in a
// fresh cookie session. With several and none picked it answers the list of
// nicknames to choose from. Starts are throttled like e-mail logins.
func (s *Server) handlePasskeyStart(c *fiber.Ctx) error {
	var in passkeyStartRequest
	if err := decodeStrict(c.Body(), &in); err != nil {
		return &Error{Status: http.StatusBadRequest, Code: codeInvalidRequestFormat,
			Message: `body must be a JSON object {"email": "…", "clientPublicKey": "…"}`}
	}
	email, err := s.admitLogin(c, in.Email)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	noPasskey := &Error{Status: http.StatusBadRequest, Code: codeInvalidInput,
		Message: "No passkey is registered for this e-mail address. Sign in with a code, then add a passkey.",
		Details: map[string]any{"reason": "NO_PASSKEY"}}
	custID, acct, err := s.findWallet(ctx, email)
	if err != nil {
		return err
	}
	if acct == "" {
		return noPasskey
	}
	creds, err := s.accountCredentials(ctx, acct)
	if err != nil {
		return err
	}
	var passkeys []wire.AuthMethod
	for _, m := range creds {
		if m.Type == wire.TypePasskey && (in.AuthMethodID == "" || m.ID == in.AuthMethodID) {
			passkeys = append(passkeys, m)
		}
	}
	switch {
	case len(passkeys) == 0:
		return noPasskey
	case len(passkeys) > 1:
		choices := make([]fiber.Map, 0, len(passkeys))
		for _, m := range passkeys {
			choices = append(choices, fiber.Map{"id": m.ID, "nickname": m.Nickname})
		}
		return c.JSON(fiber.Map{"choose": choices})
	}
	cred := passkeys[0]
	body, _ := json.Marshal(wire.ChallengeRequest{ClientPublicKey: in.ClientPublicKey})
	r, err := s.up.do(ctx, call{method: http.MethodPost, path: "/auth/credentials/" + cred.ID + "/challenge", body: body,
		header: http.Header{"Content-Type": {"application/json"}}})
	if err != nil {
		return s.unreachable(c.UserContext(), err)
	}
	if r.status != http.StatusOK {
		return writeReply(c, r)
	}
	var pc wire.PasskeyAuthChallenge
	if err := json.Unmarshal(r.body, &pc); err != nil || !validID("Request", pc.RequestID) || pc.Challenge == "" {
		return s.malformed(c.UserContext(), "passkey challenge", r, err)
	}
	err = s.startSession(c, Session{
		Email:               email,
		CustomerID:          custID,
		InternalAccountID:   acct,
		PendingCredentialID: cred.ID,
		PendingRequestID:    pc.RequestID,
	}, pendingLoginTTL)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{
		"challenge":        pc.Challenge,
		"credentialId":     pc.CredentialID,
		"nickname":         pc.Nickname,
		"rpId":             s.rpID,
		"expiresAt":        pc.ExpiresAt,
		"userVerification": "required",
	})
}

// handlePasskeyVerify is POST /api/login/passkey/verify {assertion}: the
// pending passkey login's verify call, with the challenge's Request-Id
// added here. A 200 signs the browser in as an e-mail login does.
func (s *Server) handlePasskeyVerify(c *fiber.Ctx) error {
	cs := currentSession(c)
	if cs.id == "" || cs.data.PendingCredentialID == "" || cs.data.PendingRequestID == "" {
		return &Error{Status: http.StatusBadRequest, Code: codeInvalidInput,
			Message: "no passkey login in progress; start one with POST /api/login/passkey/start",
			Details: map[string]any{"reason": "NO_PENDING_LOGIN"}}
	}
	var in struct {
		Assertion json.RawMessage `json:"assertion"`
	}
	if err := decodeStrict(c.Body(), &in); err != nil || len(in.Assertion) == 0 {
		return &Error{Status: http.StatusBadRequest, Code: codeInvalidRequestFormat, Message: `body must be {"assertion": {…}}`}
	}
	body, _ := json.Marshal(map[string]any{"type": wire.TypePasskey, "assertion": in.Assertion})
	r, err := s.up.do(c.UserContext(), call{method: http.MethodPost, path: "/auth/credentials/" + cs.data.PendingCredentialID + "/verify",
		body: body, header: http.Header{"Content-Type": {"application/json"}, wire.HeaderRequestID: {cs.data.PendingRequestID}}})
	if err != nil {
		return s.unreachable(c.UserContext(), err)
	}
	return s.completeLogin(c, cs, r)
}

// handleOAuthLogin is POST /api/login/oauth {oidcToken, clientPublicKey}.
// The token's e-mail claim (read, not trusted: the service verifies the
// token) finds the wallet and its OAUTH credential of that address; the
// service's verify then issues the session.
func (s *Server) handleOAuthLogin(c *fiber.Ctx) error {
	var in struct {
		OIDCToken       string `json:"oidcToken"`
		ClientPublicKey string `json:"clientPublicKey"`
	}
	if err := decodeStrict(c.Body(), &in); err != nil || in.OIDCToken == "" {
		return &Error{Status: http.StatusBadRequest, Code: codeInvalidRequestFormat,
			Message: `body must be {"oidcToken": "…", "clientPublicKey": "…"}`}
	}
	email := tokenEmail(in.OIDCToken)
	if msg := checkEmail(email); msg != "" {
		return invalidField("oidcToken", "", "the sign-in did not give an e-mail address")
	}
	if err := s.throttleLogin(c, email); err != nil {
		return err
	}
	ctx := c.UserContext()
	unlinked := &Error{Status: http.StatusBadRequest, Code: codeInvalidInput,
		Message: "No wallet is linked to this sign-in. Sign in with a code, then link it under Sign-in methods.",
		Details: map[string]any{"reason": "NOT_LINKED"}}
	custID, acct, err := s.findWallet(ctx, email)
	if err != nil {
		return err
	}
	if acct == "" {
		return unlinked
	}
	creds, err := s.accountCredentials(ctx, acct)
	if err != nil {
		return err
	}
	var cred *wire.AuthMethod
	for i := range creds {
		if creds[i].Type == wire.TypeOAuth && strings.EqualFold(creds[i].Nickname, email) {
			cred = &creds[i]
		}
	}
	if cred == nil {
		return unlinked
	}
	body, _ := json.Marshal(map[string]any{"type": wire.TypeOAuth, "oidcToken": in.OIDCToken, "clientPublicKey": in.ClientPublicKey})
	r, err := s.up.do(ctx, call{method: http.MethodPost, path: "/auth/credentials/" + cred.ID + "/verify",
		body: body, header: http.Header{"Content-Type": {"application/json"}}})
	if err != nil {
		return s.unreachable(c.UserContext(), err)
	}
	if r.status != http.StatusOK {
		return writeReply(c, r)
	}
	if err := s.startSession(c, Session{Email: email, CustomerID: custID, InternalAccountID: acct}, pendingLoginTTL); err != nil {
		return err
	}
	return s.completeLogin(c, currentSession(c), r)
}

// tokenEmail reads the email claim of a JWT without checking anything; it
// only routes the login to a wallet.
func tokenEmail(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || len(parts[1]) > 8192 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Email string `json:"email"`
	}
	if json.Unmarshal(b, &claims) != nil {
		return ""
	}
	return strings.TrimSpace(claims.Email)
}

// OAuthProvider is the OpenID Connect provider the page signs in with: an
// implicit-flow ID token (response_type=id_token) obtained in a pop-up,
// whose nonce binds it to the browser's wallet key.
type OAuthProvider struct {
	// Name is shown on the button, e.g. "Google" or "Dev sign-in".
	Name string `json:"name"`
	// Issuer is the token's iss; the service must trust it.
	Issuer string `json:"issuer"`
	// ClientID is the audience of the tokens.
	ClientID string `json:"clientId"`
	// AuthorizationEndpoint is where the pop-up goes.
	AuthorizationEndpoint string `json:"authorizationEndpoint"`
}

func (p *OAuthProvider) validate() error {
	u, err := url.Parse(p.AuthorizationEndpoint)
	switch {
	case p.Name == "" || p.Issuer == "" || p.ClientID == "":
		return errorString("Name, Issuer and ClientID are required")
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		return errorString("AuthorizationEndpoint must be an absolute http(s) URL")
	}
	return nil
}

type errorString string

func (e errorString) Error() string { return string(e) }
