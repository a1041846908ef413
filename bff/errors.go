package bff

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"paywallet/shared/wire"
)

// Error is the one error type of the BFF's own answers. Handlers return it;
// [Server]'s error handler writes it as the flat wire.Error body. Anything
// else that reaches the edge is logged and answered as 500 INTERNAL_ERROR
// without its text, so internal details never reach the browser.
//
// Answers of the service are not Errors: they are relayed byte for byte.
type Error struct {
	Status     int
	Code       string
	Message    string
	Details    map[string]any
	RetryAfter int // seconds; sets Retry-After when > 0 (the login limiter)
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Codes the BFF itself answers with, and their statuses. The codes are the
// service's (grid-api-facts §1.2), so the browser handles one vocabulary.
const (
	codeInvalidInput         = "INVALID_INPUT"
	codeInvalidRequestFormat = "INVALID_REQUEST_FORMAT"
	codeUnauthorized         = "UNAUTHORIZED"
	codeForbidden            = "FORBIDDEN"
	codeUserNotReady         = "USER_NOT_READY"
	codeNotFound             = "NOT_FOUND"
	codeMethodNotAllowed     = "METHOD_NOT_ALLOWED"
	codeRateLimited          = "RATE_LIMITED"
	codeInternal             = "INTERNAL_ERROR"
	codeServiceUnavailable   = "SERVICE_UNAVAILABLE"
)

var (
	errForbidden = &Error{Status: http.StatusForbidden, Code: codeForbidden,
		Message: "cross-site request refused: send X-CSRF: 1 from the wallet's own origin"}
	errSignedOut = &Error{Status: http.StatusUnauthorized, Code: codeUnauthorized,
		Message: "not signed in"}
	errUpstream = &Error{Status: http.StatusBadGateway, Code: codeServiceUnavailable,
		Message: "the payments service is unavailable; try again shortly"}
	errInternal = &Error{Status: http.StatusInternalServerError, Code: codeInternal,
		Message: "internal error"}
	// errStoreUnavailable answers a request that failed because the BFF's
	// own database (its session store, login limiter or event log:
	// bffpg) went away: a crash, a failover, the network. It may have
	// gone after the service did its part (a login completed, a passkey
	// registered), so the message claims nothing about what happened;
	// trying again is safe (web/static/js/api.js shows every 503 so).
	errStoreUnavailable = &Error{Status: http.StatusServiceUnavailable, Code: codeServiceUnavailable,
		Message:    "We couldn't reach our servers for a moment. Please try again in a few seconds.",
		RetryAfter: 1}
)

// notFound is the single 404 body for a resource the browser may not see,
// whether it is missing or belongs to another customer.
func notFound() *Error {
	return &Error{Status: http.StatusNotFound, Code: codeNotFound, Message: "not found"}
}

func invalidField(field, constraintFormat, message string) *Error {
	fe := wire.FieldError{Field: field, Message: message}
	if constraintFormat != "" {
		fe.Constraint = &wire.FieldConstraint{Format: constraintFormat}
	}
	return &Error{
		Status:  http.StatusBadRequest,
		Code:    codeInvalidInput,
		Message: "invalid " + field + ": " + message,
		Details: map[string]any{"errors": []wire.FieldError{fe}},
	}
}

// errorHandler turns whatever a handler returned (or a recovered panic)
// into the answer: the flat JSON error under /api, plain text for pages.
func (s *Server) errorHandler(c *fiber.Ctx, err error) error {
	ensureRequestID(c)
	var e *Error
	var fe *fiber.Error
	var rel relayed
	switch {
	case errors.As(err, &rel):
		return writeReply(c, rel.r)
	case errors.As(err, &e):
	case errors.As(err, &fe):
		e = fromFiberError(fe)
	case s.storeUnavailable(err):
		s.log.WarnContext(c.UserContext(), "bff: the BFF's database is unavailable", slog.String("method", c.Method()),
			slog.String("path", c.Path()), slog.Any("err", err))
		e = errStoreUnavailable
	default:
		s.log.ErrorContext(c.UserContext(), "bff: unhandled error", slog.String("method", c.Method()), slog.String("path", c.Path()), slog.Any("err", err))
		e = errInternal
	}
	if !isAPIPath(c.Path()) {
		c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
		return c.Status(e.Status).SendString(strconv.Itoa(e.Status) + " " + strings.ToLower(http.StatusText(e.Status)) + "\n")
	}
	return writeError(c, e)
}

func fromFiberError(fe *fiber.Error) *Error {
	switch fe.Code {
	case http.StatusNotFound:
		return notFound()
	case http.StatusMethodNotAllowed:
		return &Error{Status: fe.Code, Code: codeMethodNotAllowed, Message: "method not allowed"}
	case http.StatusRequestEntityTooLarge:
		return &Error{Status: fe.Code, Code: codeInvalidRequestFormat, Message: "request body too large"}
	case http.StatusBadRequest:
		return &Error{Status: fe.Code, Code: codeInvalidRequestFormat, Message: "malformed request"}
	}
	if fe.Code >= 400 && fe.Code < 500 {
		return &Error{Status: fe.Code, Code: codeInvalidRequestFormat, Message: strings.ToLower(http.StatusText(fe.Code))}
	}
	return errInternal
}

// errorBody is the BFF's error answer: the flat error, and the id of the
// request it answers (its Request-Id header), for a person to quote to
// support.
type errorBody struct {
	wire.Error
	RequestID string `json:"requestId,omitempty"`
}

func writeError(c *fiber.Ctx, e *Error) error {
	if e.RetryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(e.RetryAfter))
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(e.Status).JSON(errorBody{
		Error:     wire.Error{Status: e.Status, Code: e.Code, Message: e.Message, Details: e.Details},
		RequestID: requestID(c),
	})
}

// storeUnavailable reports whether err says that the BFF's own database
// is unavailable (Config.StoreUnavailable; nothing changed).
func (s *Server) storeUnavailable(err error) bool {
	return s.unavailable != nil && errors.Is(err, s.unavailable)
}

// storeFailed answers a failed call to the session store, limiter or event
// log: 503 with Retry-After when its database went away (a warning: it
// passes), else 500 (an error: it does not).
func (s *Server) storeFailed(ctx context.Context, what string, err error) error {
	if s.storeUnavailable(err) {
		s.log.WarnContext(ctx, "bff: "+what+": the BFF's database is unavailable", slog.Any("err", err))
		return errStoreUnavailable
	}
	s.log.ErrorContext(ctx, "bff: "+what, slog.Any("err", err))
	return errInternal
}

func isAPIPath(p string) bool { return p == "/api" || strings.HasPrefix(p, "/api/") }
