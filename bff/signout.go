package bff

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// handleSignOutEverywhere is POST /api/sign-out-everywhere {token}: the link
// of a security e-mail ("if this was not you, sign out everywhere"). The
// person who clicks it may be signed in nowhere, so it needs no cookie
// session: the token is the proof (32 random bytes, single use, 7 days).
// The service revokes every session of the token's customer; this browser's
// own cookie session, if it has one, ends with them. Counted against the
// per-address login limit, like a sign-in attempt.
func (s *Server) handleSignOutEverywhere(c *fiber.Ctx) error {
	var in struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(c.Body(), &in); err != nil || in.Token == "" || len(in.Token) > 128 {
		return &Error{Status: http.StatusBadRequest, Code: "INVALID_INPUT", Message: "invalid token: the link's token is missing or malformed",
			Details: map[string]any{"errors": []map[string]string{{"field": "token", "message": "the link's token is missing or malformed; open the link from the e-mail again"}}}}
	}
	ok, wait, err := s.limiter.Allow(c.UserContext(), "ip:"+s.clientIP(c), s.perIP)
	if err != nil {
		return s.storeFailed(c.UserContext(), "login limiter", err)
	}
	if !ok {
		secs := max(1, int(math.Ceil(wait.Seconds())))
		return &Error{Status: http.StatusTooManyRequests, Code: codeRateLimited,
			Message: fmt.Sprintf("too many attempts; try again in %d seconds", secs), Details: map[string]any{"reason": reasonTooManySignIns, "retryAfter": secs},
			RetryAfter: secs}
	}
	body, _ := json.Marshal(map[string]string{"token": in.Token})
	r, err := s.up.do(c.UserContext(), call{method: http.MethodPost, path: "/auth/sign-out-everywhere", body: body,
		header: http.Header{fiber.HeaderContentType: {fiber.MIMEApplicationJSON}}})
	if err != nil {
		return s.unreachable(c.UserContext(), err)
	}
	if r.status != http.StatusOK {
		return s.relayInternal(c.UserContext(), r)
	}
	// This browser is signed out too (its wallet session, if it was the
	// customer's, is gone already).
	if currentSession(c).id != "" {
		if err := s.endSession(c); err != nil {
			return err
		}
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Status(http.StatusOK).Send(r.body)
}
