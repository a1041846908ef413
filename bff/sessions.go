package bff

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"

	"paywallet/shared/wire"
)

// handleRevokeSession is DELETE /api/auth/sessions/:id, the service's signed
// retry DELETE /auth/sessions/{id} for a session of the cookie's wallet
// account: the first call answers the service's 202 challenge, the retry
// (Service-Wallet-Signature and Request-Id, stamped in the browser by a
// session key of the account) its 204. A session that is not an active
// session of this account is 404 before anything is forwarded, exactly as a
// missing one.
//
// Revoking the cookie's own session is logging out: after the service's 204
// the cookie session ends too, so the browser is signed out at once. Either
// way the BFF forgets the revoked session's sign-in (its User-Agent).
func (s *Server) handleRevokeSession(c *fiber.Ctx) error {
	cs, err := s.signedIn(c)
	if err != nil {
		return err
	}
	id := c.Params("id")
	if !validID("Session", id) {
		return notFound()
	}
	header, err := forwardable(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	sessions, err := s.walletSessions(ctx, cs.data.InternalAccountID)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(sessions, func(ws wire.Session) bool { return ws.ID == id }) {
		return notFound()
	}
	r, err := s.up.do(ctx, call{method: http.MethodDelete, path: "/auth/sessions/" + id, header: header})
	// Whatever the answer, what this instance remembers of the account's
	// sessions may be out of date now.
	s.live.forget(cs.data.InternalAccountID)
	if err != nil {
		return s.unreachable(c.UserContext(), err)
	}
	if r.status == http.StatusNoContent {
		s.forgetSignIn(ctx, id)
	}
	if r.status == http.StatusNoContent && id == cs.data.WalletSessionID {
		if err := s.endSession(c); err != nil {
			return err
		}
	}
	return writeReply(c, r)
}

// handleRefreshSession is POST /api/auth/sessions/:id/refresh for the cookie's
// own session only (the retry must be signed by that session's key, which
// only this browser holds): any other id is 404. The body
// ({clientPublicKey}) and the signed-retry headers go to the service as
// they are. On the service's 201 the cookie session follows the new wallet
// session (its id and expiry), since the service has revoked the old one;
// the cookie value does not change. The new session keeps the sign-in (the
// device and the time) of the one it replaces: same browser, same device.
func (s *Server) handleRefreshSession(c *fiber.Ctx) error {
	cs, err := s.signedIn(c)
	if err != nil {
		return err
	}
	id := c.Params("id")
	if id != cs.data.WalletSessionID {
		return notFound()
	}
	header, err := forwardable(c)
	if err != nil {
		return err
	}
	body := c.Body()
	if len(body) > 0 {
		header.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	}
	r, err := s.up.do(c.UserContext(), call{method: http.MethodPost, path: "/auth/sessions/" + id + "/refresh", header: header, body: body})
	if err != nil {
		return s.unreachable(c.UserContext(), err)
	}
	if r.status != http.StatusCreated {
		return writeReply(c, r)
	}
	var ws wire.Session
	if err := json.Unmarshal(r.body, &ws); err != nil || !validID("Session", ws.ID) || ws.AccountID != cs.data.InternalAccountID {
		return s.malformed(c.UserContext(), "refreshed session", r, err)
	}
	expires, err := time.Parse(time.RFC3339, ws.ExpiresAt)
	if err != nil || !expires.After(s.now()) {
		return s.malformed(c.UserContext(), "refreshed session expiry", r, err)
	}
	data := cs.data
	data.WalletSessionID = ws.ID
	data.WalletSessionExpiresAt = expires
	if err := s.updateSession(c, cs, data); err != nil {
		return err
	}
	s.carrySignIn(c.UserContext(), id, ws.ID, expires.Sub(s.now()))
	return writeReply(c, r)
}

// walletSessions lists the account's active wallet sessions, asked of the
// service with the platform credential.
func (s *Server) walletSessions(ctx context.Context, accountID string) ([]wire.Session, error) {
	return platformList[wire.Session](ctx, s, "/auth/sessions", url.Values{"accountId": {accountID}})
}
