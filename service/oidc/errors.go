package oidc

import "errors"

// Kind sorts verification failures by what the caller should answer. The
// service maps them to HTTP statuses; nothing else about an error needs to
// be inspected to choose a response.
type Kind int

const (
	// KindMalformed: the token is not a structurally valid JWT (400).
	KindMalformed Kind = iota + 1
	// KindUntrustedIssuer: the token names an issuer that is not configured
	// (400 "unsupported issuer").
	KindUntrustedIssuer
	// KindInvalid: the token is well formed but must not be believed: bad
	// signature, wrong audience, expired, refused alg, unknown key (401).
	KindInvalid
	// KindUnavailable: the issuer's keys could not be fetched, so the token
	// can be neither accepted nor refused right now (503).
	KindUnavailable
	// KindConfig: NewVerifier was given an unusable provider list. It is an
	// operator error at start-up, never an answer to a request.
	KindConfig
)

func (k Kind) String() string {
	switch k {
	case KindMalformed:
		return "malformed token"
	case KindUntrustedIssuer:
		return "unsupported issuer"
	case KindInvalid:
		return "invalid token"
	case KindUnavailable:
		return "issuer unavailable"
	case KindConfig:
		return "invalid configuration"
	}
	return "unknown error"
}

// Error is the one error type of the package. Detail is fixed text written
// here, never a value taken from the token, so Error() can be shown to the
// client that sent the token. Err, when set, is the underlying cause (a
// network or decoding error) for server logs; it is reachable with
// errors.Unwrap but is deliberately left out of Error().
type Error struct {
	Kind   Kind
	Detail string
	Err    error
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return "oidc: " + e.Kind.String()
	}
	return "oidc: " + e.Kind.String() + ": " + e.Detail
}

func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is(err, &oidc.Error{Kind: oidc.KindInvalid}) match any error
// of that kind; a target with a Detail must match it too.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return t.Kind == e.Kind && (t.Detail == "" || t.Detail == e.Detail)
}

// KindOf returns the Kind of the first *Error in err's chain, or 0 when
// there is none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

func newErr(k Kind, detail string, cause error) *Error {
	return &Error{Kind: k, Detail: detail, Err: cause}
}
