package service

import (
	"bytes"
	"errors"
	"net/http"

	"paywallet/internal/telemetry"
	"paywallet/service/payments"
	"paywallet/shared/wire"
)

// Error is the one error type of the HTTP layer: what the caller is answered
// (a status, a code, a message, details). Operations refuse with
// *payments.Error, which httpError turns into this through statusOf; the
// HTTP layer's own refusals (credentials, headers, an unreadable body, an
// unknown path) are built here directly.
type Error struct {
	Status     int
	Code       string
	Message    string
	Details    map[string]any
	RetryAfter int // seconds; sets the Retry-After header when > 0
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// errorf builds an *Error of the HTTP layer.
func errorf(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: message}
}

// Codes only the HTTP layer answers with.
const (
	codeMethodNotAllowed = "METHOD_NOT_ALLOWED"
)

// statusOf is the one table from an operation's error code to its HTTP
// status (grid-api-facts §1.2). A code missing here is a programming error:
// httpError answers it 500, and TestEveryCodeHasAStatus fails.
var statusOf = map[string]int{
	payments.CodeInvalidInput:             http.StatusBadRequest,
	payments.CodeInvalidRequestFormat:     http.StatusBadRequest,
	"AMOUNT_OUT_OF_RANGE":                 http.StatusBadRequest,
	"EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS": http.StatusBadRequest,
	"EXPIRED":                             http.StatusBadRequest,
	"INSUFFICIENT_BALANCE":                http.StatusBadRequest,
	"INVALID_BANK_ACCOUNT":                http.StatusBadRequest,
	"INVALID_CURRENCY":                    http.StatusBadRequest,
	"PASSKEY_CREDENTIAL_ALREADY_EXISTS":   http.StatusBadRequest,
	"WEBHOOK_DELIVERY_ERROR":              http.StatusBadRequest,
	"WEBHOOK_ENDPOINT_NOT_SET":            http.StatusBadRequest,

	payments.CodeUnauthorized:          http.StatusUnauthorized,
	payments.CodeSignatureMissing:      http.StatusUnauthorized,
	payments.CodeSignatureMalformed:    http.StatusUnauthorized,
	payments.CodeSignatureBodyMismatch: http.StatusUnauthorized,
	payments.CodeSignatureInvalid:      http.StatusUnauthorized,
	payments.CodeRequestIDMissing:      http.StatusUnauthorized,

	payments.CodeForbidden: http.StatusForbidden,

	payments.CodeNotFound:     http.StatusNotFound,
	payments.CodeUserNotFound: http.StatusNotFound,
	"QUOTE_NOT_FOUND":         http.StatusNotFound,
	"REFERENCE_NOT_FOUND":     http.StatusNotFound,
	"TRANSACTION_NOT_FOUND":   http.StatusNotFound,

	"LOOKUP_REQUEST_NOT_FOUND": http.StatusNotFound,
	payments.CodeUmaNotFound:   http.StatusNotFound,

	codeMethodNotAllowed: http.StatusMethodNotAllowed,

	payments.CodeConflict:              http.StatusConflict,
	payments.CodeEmailAlreadyExists:    http.StatusConflict,
	"EMAIL_OTP_CREDENTIAL_SET_CHANGED": http.StatusConflict,
	"INVALID_STATE_TRANSITION":         http.StatusConflict,
	payments.CodeNotCancellable:        http.StatusConflict,
	payments.CodeNotPendingApproval:    http.StatusConflict,

	payments.CodeCustomerDeleted: http.StatusGone,

	payments.CodeRateLimited: http.StatusTooManyRequests,

	payments.CodeInternal:           http.StatusInternalServerError,
	payments.CodeServiceUnavailable: http.StatusServiceUnavailable,

	// API tokens and the End User Terms (payments/apitokens.go)
	payments.CodeTokenNotFound:               http.StatusNotFound,
	payments.CodeEndUserTermsVersionNotFound: http.StatusBadRequest,

	// Step-up (payments/stepup.go)
	payments.CodeScaNotCompleted: http.StatusForbidden,
	payments.CodeAccountLocked:   http.StatusLocked,

	// A wallet's personal limits (payments/limits.go)
	payments.CodeLimitExceeded:            http.StatusForbidden,
	payments.CodeRecipientCoolingOff:      http.StatusForbidden,
	payments.CodeDailyVolumeLimitExceeded: http.StatusTooManyRequests,
}

// httpError maps any error to the answer the caller gets. known is false
// for an error that is neither the HTTP layer's nor an operation's refusal:
// it is logged, and answered 500 without its text.
func httpError(err error) (e *Error, known bool) {
	if errors.Is(err, payments.ErrUnavailable) {
		return unavailableError, true
	}
	if errors.Is(err, payments.ErrContention) {
		return contentionError, true
	}
	if errors.As(err, &e) {
		return e, true
	}
	var pe *payments.Error
	if errors.As(err, &pe) {
		status, ok := statusOf[pe.Code]
		if !ok {
			return internalError, false
		}
		return &Error{Status: status, Code: pe.Code, Message: pe.Message, Details: pe.Details, RetryAfter: pe.RetryAfter}, true
	}
	return internalError, false
}

var internalError = &Error{Status: http.StatusInternalServerError, Code: payments.CodeInternal, Message: "internal error"}

// unavailableError answers an operation that failed because the database
// went away (payments.ErrUnavailable: a crash, a failover, the network):
// the store guarantees nothing was half done, so the client is told to
// send the same request again, with its Idempotency-Key, which then has
// exactly one effect (a first attempt that did commit is replayed). Never
// stored under the key (a 5xx).
var unavailableError = &Error{Status: http.StatusServiceUnavailable, Code: payments.CodeServiceUnavailable,
	Message:    "The service lost its database for a moment (a failover). Retry the request with the same Idempotency-Key: it takes effect exactly once.",
	RetryAfter: 1}

// contentionError answers an operation whose transaction kept losing races
// with concurrent ones (payments.ErrContention): nothing was done, and the
// same request a moment later, with its Idempotency-Key, goes through.
var contentionError = &Error{Status: http.StatusServiceUnavailable, Code: payments.CodeServiceUnavailable,
	Message:    "The service is busy with other changes to the same records; nothing was done. Retry the request with the same Idempotency-Key.",
	RetryAfter: 1}

// body is the error's JSON answer as stored under an Idempotency-Key:
// without the request's id, which bodyFor adds for each answer.
func (e *Error) body() wire.Error {
	return wire.Error{Status: e.Status, Code: e.Code, Message: e.Message, Details: e.Details}
}

// errorBody is an error's JSON answer: the flat error and the id of the
// request it answers, to quote to support.
type errorBody struct {
	wire.Error
	RequestID string `json:"requestId,omitempty"`
}

// bodyFor is the error's answer to r, with r's request id.
func (e *Error) bodyFor(r *http.Request) errorBody {
	return errorBody{Error: e.body(), RequestID: telemetry.RequestIDFrom(r.Context())}
}

// withRequestID adds "requestId" to an encoded error body (a refusal
// stored under an Idempotency-Key is stored without one: each answer of it
// carries its own request's id). A request id needs no JSON escaping
// (telemetry.ValidRequestID), so it is spliced in before the closing brace.
func withRequestID(body []byte, id string) []byte {
	b := bytes.TrimRight(body, " \t\r\n")
	if id == "" || len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' || bytes.Contains(b, []byte(`"requestId":`)) {
		return body
	}
	out := append([]byte(nil), b[:len(b)-1]...)
	if len(bytes.TrimSpace(out)) > 1 {
		out = append(out, ',')
	}
	out = append(out, `"requestId":"`...)
	out = append(out, id...)
	return append(out, `"}`...)
}

// invalidField is a 400 INVALID_INPUT naming one field.
func invalidField(field, message string) *Error {
	return fieldErrors([]wire.FieldError{{Field: field, Message: message}})
}

// fieldErrors is a 400 INVALID_INPUT naming every field of errs, the
// answer of the operations' own field checks (payments.InvalidFields).
func fieldErrors(errs []wire.FieldError) *Error {
	e, _ := httpError(payments.InvalidFields(errs))
	return e
}
