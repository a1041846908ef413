package payments

import (
	"errors"
	"sort"
	"strconv"

	"paywallet/shared/wire"
)

// Error is the one error type of the domain: a code from the reference
// API's enums (grid-api-facts §1.2), a message for the integrator, optional
// details. Operations return it for every refusal; the HTTP layer maps the
// code to a status with one table (service.statusOf), and anything else that
// reaches it is logged and answered as 500 INTERNAL_ERROR without its text,
// so internal details never leave the process.
type Error struct {
	Code    string
	Message string
	Details map[string]any
	// RetryAfter, in seconds, is how long to wait before trying again
	// (the Retry-After header of a 429 or 503) when > 0.
	RetryAfter int
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// errorf builds an *Error.
func errorf(code, message string) *Error {
	return &Error{Code: code, Message: message}
}

// Codes the operations answer with. Where the reference has no specific
// code for a missing resource we answer NOT_FOUND; the README's API notes
// list these choices. The HTTP layer's table gives each its status.
const (
	CodeInvalidInput          = "INVALID_INPUT"
	CodeUnauthorized          = "UNAUTHORIZED"
	CodeSignatureMissing      = "WALLET_SIGNATURE_MISSING"
	CodeSignatureMalformed    = "WALLET_SIGNATURE_MALFORMED"
	CodeSignatureBodyMismatch = "WALLET_SIGNATURE_BODY_MISMATCH"
	CodeSignatureInvalid      = "WALLET_SIGNATURE_INVALID"
	CodeRequestIDMissing      = "REQUEST_ID_MISSING"
	CodeForbidden             = "FORBIDDEN"
	CodeNotFound              = "NOT_FOUND"
	CodeUserNotFound          = "USER_NOT_FOUND"
	CodeConflict              = "CONFLICT"
	CodeEmailAlreadyExists    = "EMAIL_OTP_EMAIL_ALREADY_EXISTS"
	CodeRateLimited           = "RATE_LIMITED"
	CodeInternal              = "INTERNAL_ERROR"
	CodeServiceUnavailable    = "SERVICE_UNAVAILABLE"
	CodeInvalidRequestFormat  = "INVALID_REQUEST_FORMAT"
)

// Reasons of a 429 RATE_LIMITED, in details.reason. The code stays
// RATE_LIMITED for every one; the reason lets a client tell a person what
// happened and what to do (check the inbox for the code just sent, wait for
// a lock to end) instead of a bare "too many attempts".
const (
	ReasonCodeRecentlySent        = "CODE_RECENTLY_SENT"        // a code was e-mailed less than OTPResendInterval ago
	ReasonCredentialLocked        = "CREDENTIAL_LOCKED"         // too many wrong codes; the credential waits out its lock
	ReasonChallengeRecentlyIssued = "CHALLENGE_RECENTLY_ISSUED" // a passkey challenge was issued moments ago
)

// rateLimited is a 429 RATE_LIMITED with Retry-After and, in details, the
// reason and the same wait in seconds (at least 1).
func rateLimited(reason, message string, retryAfter int) *Error {
	retryAfter = max(retryAfter, 1)
	return &Error{Code: CodeRateLimited, Message: message,
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
		Code:    CodeInvalidInput,
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
	return &Error{Code: CodeInternal, Message: "internal error"}, false
}

// InvalidFields is the 400 INVALID_INPUT refusal naming every field of
// errs (nil when there is none), the same answer the operations' own field
// checks give. The HTTP layer uses it for the fields it cannot decode.
func InvalidFields(errs []wire.FieldError) error {
	if e := fieldErrors(errs).err(); e != nil {
		return e
	}
	return nil
}

// ErrSandboxOnly refuses a sandbox operation in production mode.
var ErrSandboxOnly = errorf(CodeForbidden, "sandbox endpoints are only available in sandbox mode")
