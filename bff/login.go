package bff

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"paywallet/shared/wire"
)

// configResponse is the answer of GET /api/config.
type configResponse struct {
	Mode               string `json:"mode"`
	OTPSignerPublicKey string `json:"otpSignerPublicKey"`
	WasmURL            string `json:"wasmUrl"`
	WasmExecURL        string `json:"wasmExecUrl"`
	DevMailbox         bool   `json:"devMailbox"`
	DevMailboxURL      string `json:"devMailboxUrl,omitempty"`
}

func (s *Server) handleConfig(c *fiber.Ctx) error {
	out := configResponse{
		Mode:               s.mode,
		OTPSignerPublicKey: s.signerKey,
		WasmURL:            s.assets.wasmURL,
		WasmExecURL:        wasmExecURL,
		DevMailbox:         s.devMailbox,
	}
	if s.devMailbox {
		out.DevMailboxURL = devMailboxPath + "/"
	}
	return c.JSON(out)
}

// loginStartRequest is the body of POST /api/login/start.
type loginStartRequest struct {
	Email string `json:"email"`
}

// loginStartResponse is its answer.
type loginStartResponse struct {
	CredentialID              string `json:"credentialId"`
	OTPEncryptionTargetBundle string `json:"otpEncryptionTargetBundle"`
	Email                     string `json:"email"`
}

// handleLoginStart finds or creates the customer of an e-mail address,
// finds its embedded wallet and EMAIL_OTP credential, has the service
// e-mail a code, and remembers the pending login in a fresh cookie session.
func (s *Server) handleLoginStart(c *fiber.Ctx) error {
	var in loginStartRequest
	if err := decodeStrict(c.Body(), &in); err != nil {
		return &Error{Status: http.StatusBadRequest, Code: codeInvalidRequestFormat,
			Message: "body must be a JSON object {\"email\": \"…\"}"}
	}
	email := strings.TrimSpace(in.Email)
	if msg := checkEmail(email); msg != "" {
		return invalidField("email", "email", msg)
	}
	ctx := c.UserContext()

	cust, err := s.findOrCreateCustomer(ctx, strings.ToLower(email), email)
	if err != nil {
		return err
	}
	acct, err := s.walletAccount(ctx, cust.ID)
	if err != nil {
		return err
	}
	cred, err := s.emailCredential(ctx, acct, email)
	if err != nil {
		return err
	}
	p, ok := expand("/auth/credentials/{AuthMethod}/challenge", func(string) string { return cred.ID })
	if !ok {
		s.log.Error("bff: service returned a malformed credential id")
		return errUpstream
	}
	r, err := s.up.do(ctx, call{method: http.MethodPost, path: p})
	if err != nil {
		return s.unreachable(err)
	}
	if r.status != http.StatusOK {
		return s.relayInternal(r)
	}
	var challenged wire.AuthMethod
	if err := decodeJSON(r.body, &challenged); err != nil || challenged.OTPEncryptionTargetBundle == "" {
		s.log.Error("bff: challenge answer without otpEncryptionTargetBundle")
		return errUpstream
	}
	sent := email
	if cred.Nickname != "" {
		sent = cred.Nickname
	}
	err = s.startSession(c, Session{
		Email:               sent,
		CustomerID:          cust.ID,
		InternalAccountID:   acct,
		PendingCredentialID: cred.ID,
	}, pendingLoginTTL)
	if err != nil {
		return err
	}
	return c.JSON(loginStartResponse{
		CredentialID:              cred.ID,
		OTPEncryptionTargetBundle: challenged.OTPEncryptionTargetBundle,
		Email:                     sent,
	})
}

// findOrCreateCustomer looks the customer up by platformCustomerId and
// creates it when absent. A 409 CONFLICT on creation means another request
// (a second tab) created it meanwhile: look it up again.
func (s *Server) findOrCreateCustomer(ctx context.Context, platformID, email string) (*wire.Customer, error) {
	var conflict *reply
	for attempt := 0; attempt < 2; attempt++ {
		r, err := s.up.do(ctx, call{method: http.MethodGet, path: "/customers",
			query: url.Values{"platformCustomerId": {platformID}}})
		if err != nil {
			return nil, s.unreachable(err)
		}
		if r.status != http.StatusOK {
			return nil, s.relayInternal(r)
		}
		var list wire.List[wire.Customer]
		if err := decodeJSON(r.body, &list); err != nil {
			return nil, s.malformed("customer list", err)
		}
		for i := range list.Data {
			if list.Data[i].PlatformCustomerID == platformID && validID("Customer", list.Data[i].ID) {
				return &list.Data[i], nil
			}
		}
		if conflict != nil {
			break
		}
		body, _ := json.Marshal(wire.CustomerCreateRequest{
			PlatformCustomerID: platformID,
			CustomerType:       "INDIVIDUAL",
			Email:              email,
		})
		r, err = s.up.do(ctx, call{method: http.MethodPost, path: "/customers", body: body,
			header: http.Header{"Content-Type": {"application/json"}}})
		if err != nil {
			return nil, s.unreachable(err)
		}
		switch {
		case r.status == http.StatusCreated || r.status == http.StatusOK:
			var cust wire.Customer
			if err := decodeJSON(r.body, &cust); err != nil || !validID("Customer", cust.ID) {
				return nil, s.malformed("created customer", err)
			}
			return &cust, nil
		case r.status == http.StatusConflict && r.errorCode() == "CONFLICT":
			conflict = r
		default:
			return nil, s.relayInternal(r)
		}
	}
	return nil, relay(conflict)
}

// walletAccount returns the id of the customer's EMBEDDED_WALLET account.
func (s *Server) walletAccount(ctx context.Context, customerID string) (string, error) {
	r, err := s.up.do(ctx, call{method: http.MethodGet, path: "/customers/internal-accounts",
		query: url.Values{"customerId": {customerID}, "type": {"EMBEDDED_WALLET"}}})
	if err != nil {
		return "", s.unreachable(err)
	}
	if r.status != http.StatusOK {
		return "", s.relayInternal(r)
	}
	var list wire.List[wire.InternalAccount]
	if err := decodeJSON(r.body, &list); err != nil {
		return "", s.malformed("internal account list", err)
	}
	for _, a := range list.Data {
		if a.Type == "EMBEDDED_WALLET" && (a.CustomerID == "" || a.CustomerID == customerID) && validID("InternalAccount", a.ID) {
			return a.ID, nil
		}
	}
	return "", &Error{Status: http.StatusForbidden, Code: codeUserNotReady,
		Message: "this customer has no embedded wallet"}
}

// emailCredential returns the account's EMAIL_OTP credential, preferring
// the one whose nickname is the e-mail address.
func (s *Server) emailCredential(ctx context.Context, accountID, email string) (*wire.AuthMethod, error) {
	r, err := s.up.do(ctx, call{method: http.MethodGet, path: "/auth/credentials",
		query: url.Values{"accountId": {accountID}}})
	if err != nil {
		return nil, s.unreachable(err)
	}
	if r.status != http.StatusOK {
		return nil, s.relayInternal(r)
	}
	var list wire.Data[wire.AuthMethod]
	if err := decodeJSON(r.body, &list); err != nil {
		return nil, s.malformed("credential list", err)
	}
	var found *wire.AuthMethod
	for i := range list.Data {
		m := &list.Data[i]
		if m.Type != wire.TypeEmailOTP || !validID("AuthMethod", m.ID) {
			continue
		}
		if strings.EqualFold(m.Nickname, email) {
			return m, nil
		}
		if found == nil {
			found = m
		}
	}
	if found == nil {
		return nil, &Error{Status: http.StatusForbidden, Code: codeUserNotReady,
			Message: "this wallet has no e-mail login"}
	}
	return found, nil
}

// handleLoginVerify forwards both legs of the EMAIL_OTP verification to the
// pending credential: the body and the two signature headers go through
// unchanged, and so does every answer but the final 200, which also binds
// the cookie session to the wallet session and rotates the cookie.
func (s *Server) handleLoginVerify(c *fiber.Ctx) error {
	cs := currentSession(c)
	if cs.id == "" || cs.data.PendingCredentialID == "" {
		return &Error{Status: http.StatusBadRequest, Code: codeInvalidInput,
			Message: "no login in progress; start one with POST /api/login/start",
			Details: map[string]any{"reason": "NO_PENDING_LOGIN"}}
	}
	p, ok := expand("/auth/credentials/{AuthMethod}/verify", func(string) string { return cs.data.PendingCredentialID })
	if !ok {
		return errInternal
	}
	header, err := forwardable(c)
	if err != nil {
		return err
	}
	r, err := s.up.do(c.UserContext(), call{method: http.MethodPost, path: p, body: c.Body(), header: header})
	if err != nil {
		return s.unreachable(err)
	}
	if r.status != http.StatusOK {
		return relay(r)
	}
	var ws wire.Session
	if err := decodeJSON(r.body, &ws); err != nil {
		return s.malformed("session", err)
	}
	expires, err := time.Parse(time.RFC3339, ws.ExpiresAt)
	switch {
	case err != nil, !validID("Session", ws.ID):
		return s.malformed("session", err)
	case ws.AccountID != cs.data.InternalAccountID:
		s.log.Error("bff: verify issued a session for another account")
		return errUpstream
	case !s.now().Before(expires):
		s.log.Error("bff: verify issued an already expired session")
		return errUpstream
	}
	data := cs.data
	data.PendingCredentialID = ""
	data.WalletSessionID = ws.ID
	data.WalletSessionExpiresAt = expires
	if err := s.startSession(c, data, expires.Sub(s.now())); err != nil {
		return err
	}
	return relay(r)
}

// meResponse is the answer of GET /api/me.
type meResponse struct {
	Email           string          `json:"email"`
	CustomerID      string          `json:"customerId"`
	InternalAccount json.RawMessage `json:"internalAccount"`
	Session         meSession       `json:"session"`
}

type meSession struct {
	ID        string `json:"id"`
	ExpiresAt string `json:"expiresAt"`
	Type      string `json:"type"`
	Nickname  string `json:"nickname"`
}

// handleMe reports who is signed in, with the wallet account as the service
// shows it. A wallet session the service no longer lists (revoked, expired)
// ends the cookie session.
func (s *Server) handleMe(c *fiber.Ctx) error {
	cs, err := s.signedIn(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()

	r, err := s.up.do(ctx, call{method: http.MethodGet, path: "/customers/internal-accounts",
		query: url.Values{"customerId": {cs.data.CustomerID}, "type": {"EMBEDDED_WALLET"}}})
	if err != nil {
		return s.unreachable(err)
	}
	if r.status != http.StatusOK {
		return s.relayInternal(r)
	}
	var accounts wire.List[json.RawMessage]
	if err := decodeJSON(r.body, &accounts); err != nil {
		return s.malformed("internal account list", err)
	}
	var acct json.RawMessage
	for _, raw := range accounts.Data {
		var head struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &head) == nil && head.ID == cs.data.InternalAccountID {
			acct = raw
			break
		}
	}
	if acct == nil {
		s.log.Warn("bff: signed-in account no longer listed")
		return s.signOut(c)
	}

	r, err = s.up.do(ctx, call{method: http.MethodGet, path: "/auth/sessions",
		query: url.Values{"accountId": {cs.data.InternalAccountID}}})
	if err != nil {
		return s.unreachable(err)
	}
	if r.status != http.StatusOK {
		return s.relayInternal(r)
	}
	var sessions wire.Data[wire.Session]
	if err := decodeJSON(r.body, &sessions); err != nil {
		return s.malformed("session list", err)
	}
	for _, ws := range sessions.Data {
		if ws.ID == cs.data.WalletSessionID {
			return c.JSON(meResponse{
				Email:           cs.data.Email,
				CustomerID:      cs.data.CustomerID,
				InternalAccount: acct,
				Session:         meSession{ID: ws.ID, ExpiresAt: ws.ExpiresAt, Type: ws.Type, Nickname: ws.Nickname},
			})
		}
	}
	return s.signOut(c) // revoked or expired on the service
}

// signOut ends the cookie session and answers 401.
func (s *Server) signOut(c *fiber.Ctx) error {
	if err := s.endSession(c); err != nil {
		return err
	}
	return errSignedOut
}

// handleLogout ends the cookie session. It answers 204 whether or not there
// was one, so a stale tab can always clean up.
func (s *Server) handleLogout(c *fiber.Ctx) error {
	if err := s.endSession(c); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}

// unreachable logs a failed service call and returns the 502 answer.
func (s *Server) unreachable(err error) error {
	s.log.Error("bff: service unreachable", slog.Any("err", err))
	return errUpstream
}

// malformed logs a 2xx answer the BFF cannot use and returns the 502 answer.
func (s *Server) malformed(what string, err error) error {
	s.log.Error("bff: malformed service answer", slog.String("what", what), slog.Any("err", err))
	return errUpstream
}

// relayInternal passes on a non-2xx answer to a request the BFF made on its
// own account. A 401 there means the platform credential was refused, which
// is the BFF's problem, not the browser's: that becomes a 502.
func (s *Server) relayInternal(r *reply) error {
	if r.status == http.StatusUnauthorized || r.status == http.StatusForbidden && r.errorCode() == codeForbidden {
		s.log.Error("bff: the service refused the platform credential", slog.Int("status", r.status))
		return errUpstream
	}
	return relay(r)
}

// checkEmail returns "" for a plausible single e-mail address, else why not.
func checkEmail(email string) string {
	switch {
	case email == "":
		return "is required"
	case len(email) > 254:
		return "must be at most 254 characters"
	}
	a, err := mail.ParseAddress(email)
	if err != nil || a.Name != "" || a.Address != email {
		return "must be an e-mail address such as name@example.com"
	}
	local, domain, _ := strings.Cut(email, "@")
	if len(local) > 64 || !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") ||
		strings.ContainsAny(email, "\"()<>[]\\,; ") {
		return "must be an e-mail address such as name@example.com"
	}
	return ""
}

func decodeJSON(b []byte, v any) error { return json.Unmarshal(b, v) }

// decodeStrict decodes exactly one JSON object with no unknown fields.
func decodeStrict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data")
	}
	return nil
}
