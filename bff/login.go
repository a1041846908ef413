package bff

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"paywallet/shared/accountrules"
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
	// OAuth is the identity provider offered for sign-in, when one is
	// configured.
	OAuth *OAuthProvider `json:"oauth,omitempty"`
	// Currencies and AccountTypes are facts of shared/accountrules the page
	// needs before the wasm module loads: decimals to write amounts (format.js),
	// and what a recipient's type says of it (its country, whether it is a
	// wallet).
	Currencies   []accountrules.Currency  `json:"currencies"`
	AccountTypes []accountrules.TypeFacts `json:"accountTypes"`
}

// accountFacts are the same for every answer of GET /api/config.
var accountFacts = struct {
	currencies []accountrules.Currency
	types      []accountrules.TypeFacts
}{accountrules.Currencies(), accountrules.Types()}

func (s *Server) handleConfig(c *fiber.Ctx) error {
	out := configResponse{
		Mode:               s.mode,
		OTPSignerPublicKey: s.signerKey,
		WasmURL:            s.assets.wasmURL,
		WasmExecURL:        s.assets.url("/" + wasmExecFile),
		DevMailbox:         s.devMailbox,
		OAuth:              s.oauth,
		Currencies:         accountFacts.currencies,
		AccountTypes:       accountFacts.types,
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

// loginStartResponse is its answer. The credential id stays in the cookie
// session: the page has no use for it.
type loginStartResponse struct {
	OTPEncryptionTargetBundle string `json:"otpEncryptionTargetBundle"`
	// Email is the address as typed, where the code was sent.
	Email string `json:"email"`
}

// handleLoginStart finds or creates the customer of an e-mail address,
// finds its embedded wallet and the EMAIL_OTP credential of that address,
// has the service e-mail a code, and remembers the pending login in a fresh
// cookie session. Well-formed starts are throttled (throttleLogin) before
// the service is asked anything.
func (s *Server) handleLoginStart(c *fiber.Ctx) error {
	var in loginStartRequest
	if err := decodeStrict(c.Body(), &in); err != nil {
		return &Error{Status: http.StatusBadRequest, Code: codeInvalidRequestFormat,
			Message: "body must be a JSON object {\"email\": \"…\"}"}
	}
	email, err := s.admitLogin(c, in.Email)
	if err != nil {
		return err
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
		s.log.ErrorContext(ctx, "bff: service returned a malformed credential id")
		return errUpstream
	}
	r, err := s.up.do(ctx, call{method: http.MethodPost, path: p})
	if err != nil {
		return s.unreachable(ctx, err)
	}
	if r.status != http.StatusOK {
		return s.relayInternal(ctx, r)
	}
	var challenged wire.AuthMethod
	if err := json.Unmarshal(r.body, &challenged); err != nil || challenged.OTPEncryptionTargetBundle == "" {
		s.log.ErrorContext(ctx, "bff: challenge answer without otpEncryptionTargetBundle", slog.String("upstream_request_id", r.requestID()))
		return errUpstream
	}
	err = s.startSession(c, Session{
		Email:               email,
		CustomerID:          cust.ID,
		InternalAccountID:   acct,
		PendingCredentialID: cred.ID,
	}, pendingLoginTTL)
	if err != nil {
		return err
	}
	return c.JSON(loginStartResponse{OTPEncryptionTargetBundle: challenged.OTPEncryptionTargetBundle, Email: email})
}

// admitLogin checks the e-mail address a login starts with and counts the
// start against the login limits (throttleLogin); it returns the address
// trimmed.
func (s *Server) admitLogin(c *fiber.Ctx, typed string) (string, error) {
	email := strings.TrimSpace(typed)
	if msg := checkEmail(email); msg != "" {
		return "", invalidField("email", "email", msg)
	}
	return email, s.throttleLogin(c, email)
}

// findOrCreateCustomer looks the customer up by platformCustomerId and
// creates it when absent. A 409 CONFLICT on creation means another request
// (a second tab) created it meanwhile: look it up again.
func (s *Server) findOrCreateCustomer(ctx context.Context, platformID, email string) (*wire.Customer, error) {
	var conflict *reply
	for attempt := 0; attempt < 2; attempt++ {
		found, err := s.findCustomer(ctx, platformID)
		if err != nil || found != nil {
			return found, err
		}
		if conflict != nil {
			break
		}
		body, _ := json.Marshal(wire.CustomerCreateRequest{
			PlatformCustomerID: platformID,
			CustomerType:       "INDIVIDUAL",
			Email:              email,
		})
		r, err := s.up.do(ctx, call{method: http.MethodPost, path: "/customers", body: body,
			header: http.Header{"Content-Type": {"application/json"}}})
		if err != nil {
			return nil, s.unreachable(ctx, err)
		}
		switch {
		case r.status == http.StatusCreated || r.status == http.StatusOK:
			var cust wire.Customer
			if err := json.Unmarshal(r.body, &cust); err != nil || !validID("Customer", cust.ID) {
				return nil, s.malformed(ctx, "created customer", r, err)
			}
			return &cust, nil
		case r.status == http.StatusConflict && r.errorCode() == "CONFLICT":
			conflict = r
		default:
			return nil, s.relayInternal(ctx, r)
		}
	}
	return nil, relay(conflict)
}

// findCustomer looks the customer up by platformCustomerId; nil when there
// is none.
func (s *Server) findCustomer(ctx context.Context, platformID string) (*wire.Customer, error) {
	r, err := s.up.do(ctx, call{method: http.MethodGet, path: "/customers",
		query: url.Values{"platformCustomerId": {platformID}}})
	if err != nil {
		return nil, s.unreachable(ctx, err)
	}
	if r.status != http.StatusOK {
		return nil, s.relayInternal(ctx, r)
	}
	var list wire.List[wire.Customer]
	if err := json.Unmarshal(r.body, &list); err != nil {
		return nil, s.malformed(ctx, "customer list", r, err)
	}
	for i := range list.Data {
		if list.Data[i].PlatformCustomerID == platformID && validID("Customer", list.Data[i].ID) {
			return &list.Data[i], nil
		}
	}
	return nil, nil
}

// wallet is one EMBEDDED_WALLET account as the service lists it: the
// fields the BFF checks, and the object itself for GET /api/me.
type wallet struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	CustomerID string `json:"customerId"`
	raw        json.RawMessage
}

// wallets lists the customer's EMBEDDED_WALLET accounts with a valid id.
func (s *Server) wallets(ctx context.Context, customerID string) ([]wallet, error) {
	r, err := s.up.do(ctx, call{method: http.MethodGet, path: "/customers/internal-accounts",
		query: url.Values{"customerId": {customerID}, "type": {"EMBEDDED_WALLET"}}})
	if err != nil {
		return nil, s.unreachable(ctx, err)
	}
	if r.status != http.StatusOK {
		return nil, s.relayInternal(ctx, r)
	}
	var list wire.List[json.RawMessage]
	if err := json.Unmarshal(r.body, &list); err != nil {
		return nil, s.malformed(ctx, "internal account list", r, err)
	}
	var out []wallet
	for _, raw := range list.Data {
		var w wallet
		if json.Unmarshal(raw, &w) != nil || w.Type != "EMBEDDED_WALLET" || !validID("InternalAccount", w.ID) ||
			(w.CustomerID != "" && w.CustomerID != customerID) {
			continue
		}
		w.raw = raw
		out = append(out, w)
	}
	return out, nil
}

// walletAccount returns the id of the customer's EMBEDDED_WALLET account.
func (s *Server) walletAccount(ctx context.Context, customerID string) (string, error) {
	list, err := s.wallets(ctx, customerID)
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "", &Error{Status: http.StatusForbidden, Code: codeUserNotReady,
			Message: "this customer has no embedded wallet"}
	}
	return list[0].ID, nil
}

// emailCredential returns the account's EMAIL_OTP credential for this
// e-mail address (its nickname, in any letter case). There is no fallback
// to another EMAIL_OTP credential: the browser is anonymous here, and a
// code must never go to, nor the page show, an address nobody typed.
func (s *Server) emailCredential(ctx context.Context, accountID, email string) (*wire.AuthMethod, error) {
	list, err := s.accountCredentials(ctx, accountID)
	if err != nil {
		return nil, err
	}
	for i := range list {
		if m := &list[i]; m.Type == wire.TypeEmailOTP && strings.EqualFold(m.Nickname, email) {
			return m, nil
		}
	}
	return nil, &Error{Status: http.StatusForbidden, Code: codeUserNotReady,
		Message: "this wallet has no e-mail login for this address"}
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
		return s.unreachable(c.UserContext(), err)
	}
	return s.completeLogin(c, cs, r)
}

// completeLogin relays the service's answer to a login's last call; a 200
// also binds the cookie session to the issued wallet session and rotates
// the cookie.
func (s *Server) completeLogin(c *fiber.Ctx, cs *cookieSession, r *reply) error {
	if r.status != http.StatusOK {
		return writeReply(c, r)
	}
	var ws wire.Session
	if err := json.Unmarshal(r.body, &ws); err != nil {
		return s.malformed(c.UserContext(), "session", r, err)
	}
	expires, err := time.Parse(time.RFC3339, ws.ExpiresAt)
	switch {
	case err != nil, !validID("Session", ws.ID):
		return s.malformed(c.UserContext(), "session", r, err)
	case ws.AccountID != cs.data.InternalAccountID:
		s.log.ErrorContext(c.UserContext(), "bff: verify issued a session for another account", slog.String("upstream_request_id", r.requestID()))
		return errUpstream
	case !s.now().Before(expires):
		s.log.ErrorContext(c.UserContext(), "bff: verify issued an already expired session", slog.String("upstream_request_id", r.requestID()))
		return errUpstream
	}
	data := cs.data
	data.PendingCredentialID, data.PendingRequestID = "", ""
	data.WalletSessionID = ws.ID
	data.WalletSessionExpiresAt = expires
	if err := s.startSession(c, data, expires.Sub(s.now())); err != nil {
		return err
	}
	s.rememberSignIn(c, ws.ID, expires.Sub(s.now()))
	return writeReply(c, r)
}

// meResponse is the answer of GET /api/me.
type meResponse struct {
	// SignedIn is true here; GET /api/me answers {"signedIn": false} and
	// nothing else when nobody is (handleMe).
	SignedIn        bool            `json:"signedIn"`
	Email           string          `json:"email"`
	CustomerID      string          `json:"customerId"`
	InternalAccount json.RawMessage `json:"internalAccount"`
	Session         meSession       `json:"session"`
}

type meSession struct {
	ID        string `json:"id"`
	ExpiresAt string `json:"expiresAt"`
	// ExpiresIn is the seconds left, counted on the server: the page counts
	// down from it with its own monotonic clock, so a device whose wall
	// clock is off neither signs out early nor shows a wrong time.
	ExpiresIn int64  `json:"expiresIn"`
	Type      string `json:"type"`
	Nickname  string `json:"nickname"`
}

// handleMe reports who is signed in, with the wallet account as the service
// shows it. A wallet session the service no longer lists (revoked, expired)
// ends the cookie session.
//
// GET /api/me is the question a page asks first: who is signed in here?
// "Nobody" is an answer to it, not an error: 200 {"signedIn": false} where
// every other route answers 401, so that a signed-out visit logs no failed
// request in the browser's console. The cookie session, if there was one,
// is ended all the same. (web/static/js/api.js turns the answer into the
// 401 the pages handle.)
func (s *Server) handleMe(c *fiber.Ctx) error {
	err := s.me(c)
	if errors.Is(err, errSignedOut) {
		return c.JSON(fiber.Map{"signedIn": false})
	}
	return err
}

func (s *Server) me(c *fiber.Ctx) error {
	cs, err := s.signedIn(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()

	list, err := s.wallets(ctx, cs.data.CustomerID)
	if err != nil {
		return err
	}
	var acct json.RawMessage
	for _, w := range list {
		if w.ID == cs.data.InternalAccountID {
			acct = w.raw
			break
		}
	}
	if acct == nil {
		s.log.WarnContext(c.UserContext(), "bff: signed-in account no longer listed")
		return s.signOut(c)
	}

	sessions, err := s.walletSessions(ctx, cs.data.InternalAccountID)
	if err != nil {
		return err
	}
	for _, ws := range sessions {
		if ws.ID != cs.data.WalletSessionID {
			continue
		}
		expires, err := time.Parse(time.RFC3339, ws.ExpiresAt)
		if err != nil {
			expires = cs.data.WalletSessionExpiresAt // as it was at verify
		}
		return c.JSON(meResponse{
			SignedIn:        true,
			Email:           cs.data.Email,
			CustomerID:      cs.data.CustomerID,
			InternalAccount: acct,
			Session: meSession{ID: ws.ID, ExpiresAt: ws.ExpiresAt, Type: ws.Type, Nickname: ws.Nickname,
				ExpiresIn: max(0, int64(expires.Sub(s.now())/time.Second))},
		})
	}
	return s.signOut(c) // revoked or expired on the service
}

// signOut ends the cookie session of a wallet session that is over (no
// longer listed by the service), forgets its sign-in, and answers 401.
func (s *Server) signOut(c *fiber.Ctx) error {
	if cs := currentSession(c); cs.data.WalletSessionID != "" {
		s.forgetSignIn(c.UserContext(), cs.data.WalletSessionID)
	}
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
func (s *Server) unreachable(ctx context.Context, err error) error {
	attrs := []any{slog.Any("err", err)}
	if id := upstreamRequestID(err); id != "" {
		attrs = append(attrs, slog.String("upstream_request_id", id))
	}
	s.log.ErrorContext(ctx, "bff: service unreachable", attrs...)
	return errUpstream
}

// malformed logs a 2xx answer the BFF cannot use and returns the 502 answer.
func (s *Server) malformed(ctx context.Context, what string, r *reply, err error) error {
	s.log.ErrorContext(ctx, "bff: malformed service answer", slog.String("what", what), slog.Any("err", err),
		slog.String("upstream_request_id", r.requestID()))
	return errUpstream
}

// relayInternal passes on a non-2xx answer to a request the BFF made on its
// own account. A 401 there means the platform credential was refused, which
// is the BFF's problem, not the browser's: that becomes a 502.
func (s *Server) relayInternal(ctx context.Context, r *reply) error {
	if r.status == http.StatusUnauthorized || r.status == http.StatusForbidden && r.errorCode() == codeForbidden {
		s.log.ErrorContext(ctx, "bff: the service refused the platform credential", slog.Int("status", r.status),
			slog.String("upstream_request_id", r.requestID()))
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

// decodeStrict decodes exactly one JSON value with no unknown fields and
// nothing after it but white space. (Decoder.More would miss a stray } or ].)
func decodeStrict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if err := d.Decode(&json.RawMessage{}); err != io.EOF {
		return errors.New("trailing data")
	}
	return nil
}
