package service

import (
	"errors"
	"net/http"
	"sort"
	"strconv"

	"paywallet/shared/wire"
)

// Error is the one error type of the HTTP layer: a status, a code from the
// reference API's enums, a message for the integrator and optional details.
// Handlers return it; anything else that reaches the edge is logged and
// answered as 500 INTERNAL_ERROR without its text, so internal details never
// leave the process.
type Error struct {
	Status     int
	Code       string
	Message    string
	Details    map[string]any
	RetryAfter int // seconds; sets the Retry-After header when > 0
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// errorf builds an *Error.
func errorf(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: message}
}

// Codes used by the service, by status (grid-api-facts §1.2). Where the
// reference has no specific code for a missing resource we answer NOT_FOUND;
// the README's API notes list these choices.
const (
	codeInvalidInput          = "INVALID_INPUT"
	codeUnauthorized          = "UNAUTHORIZED"
	codeSignatureMissing      = "WALLET_SIGNATURE_MISSING"
	codeSignatureMalformed    = "WALLET_SIGNATURE_MALFORMED"
	codeSignatureBodyMismatch = "WALLET_SIGNATURE_BODY_MISMATCH"
	codeSignatureInvalid      = "WALLET_SIGNATURE_INVALID"
	codeRequestIDMissing      = "REQUEST_ID_MISSING"
	codeForbidden             = "FORBIDDEN"
	codeNotFound              = "NOT_FOUND"
	codeUserNotFound          = "USER_NOT_FOUND"
	codeMethodNotAllowed      = "METHOD_NOT_ALLOWED"
	codeConflict              = "CONFLICT"
	codeEmailAlreadyExists    = "EMAIL_OTP_EMAIL_ALREADY_EXISTS"
	codeRateLimited           = "RATE_LIMITED"
	codeInternal              = "INTERNAL_ERROR"
	codeServiceUnavailable    = "SERVICE_UNAVAILABLE"
	codeInvalidRequestFormat  = "INVALID_REQUEST_FORMAT"
)

// Reasons of a 429 RATE_LIMITED, in details.reason. The code stays
// RATE_LIMITED for every one; the reason lets a client tell a person what
// happened and what to do (check the inbox for the code just sent, wait for
// a lock to end) instead of a bare "too many attempts".
const (
	reasonCodeRecentlySent        = "CODE_RECENTLY_SENT"        // a code was e-mailed less than OTPResendInterval ago
	reasonCredentialLocked        = "CREDENTIAL_LOCKED"         // too many wrong codes; the credential waits out its lock
	reasonChallengeRecentlyIssued = "CHALLENGE_RECENTLY_ISSUED" // a passkey challenge was issued moments ago
)

// rateLimited is a 429 RATE_LIMITED with Retry-After and, in details, the
// reason and the same wait in seconds (at least 1).
func rateLimited(reason, message string, retryAfter int) *Error {
	retryAfter = max(retryAfter, 1)
	return &Error{Status: http.StatusTooManyRequests, Code: codeRateLimited, Message: message,
		Details: map[string]any{"reason": reason, "retryAfter": retryAfter}, RetryAfter: retryAfter}
}

// fieldErrors collects every bad field of a request so that one answer names
// them all, as integrators asked the reference API to do (facts §9, #764).
type fieldErrors []wire.FieldError

func (fe *fieldErrors) add(field, message string) {
	*fe = append(*fe, wire.FieldError{Field: field, Message: message})
}

func (fe *fieldErrors) addConstraint(field, message string, c wire.FieldConstraint) {
	*fe = append(*fe, wire.FieldError{Field: field, Message: message, Constraint: &c})
}

// err returns nil when no field is bad, else the 400 INVALID_INPUT answer.
func (fe fieldErrors) err() *Error {
	if len(fe) == 0 {
		return nil
	}
	sorted := append(fieldErrors(nil), fe...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Field < sorted[j].Field })
	msg := "invalid " + sorted[0].Field + ": " + sorted[0].Message
	if len(sorted) > 1 {
		msg = strconv.Itoa(len(sorted)) + " fields are invalid; see details.errors"
	}
	return &Error{
		Status:  http.StatusBadRequest,
		Code:    codeInvalidInput,
		Message: msg,
		Details: map[string]any{"errors": []wire.FieldError(sorted)},
	}
}

func invalidField(field, message string) *Error {
	var fe fieldErrors
	fe.add(field, message)
	return fe.err()
}

// asError maps any error to the *Error answered to the caller.
func asError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return &Error{Status: http.StatusInternalServerError, Code: codeInternal, Message: "internal error"}, false
}
