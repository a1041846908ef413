package walletcrypto

import "errors"

// Sentinel errors. Every error this package returns either is one of these,
// wraps one of them (test with [errors.Is]), or is a [*StampError].
var (
	// ErrInvalidPrivateKey reports a scalar that is not 32 bytes or not in [1, n-1],
	// or a key that was wiped.
	ErrInvalidPrivateKey = errors.New("walletcrypto: invalid private key")

	// ErrInvalidPublicKey reports a SEC 1 encoding that is malformed or not a point of P-256.
	ErrInvalidPublicKey = errors.New("walletcrypto: invalid public key")

	// ErrDecrypt reports that HPKE decryption failed: the ciphertext, the
	// encapsulated key or the recipient key is wrong.
	ErrDecrypt = errors.New("walletcrypto: decryption failed")

	// ErrMalformed reports an encoding (base58check, bundle, JSON, DER) that does not parse.
	ErrMalformed = errors.New("walletcrypto: malformed input")

	// ErrSignerMismatch reports a target bundle signed by a key other than the pinned one.
	ErrSignerMismatch = errors.New("walletcrypto: signer does not match the pinned key")

	// ErrInvalidSignature reports an ECDSA signature that does not verify.
	ErrInvalidSignature = errors.New("walletcrypto: invalid signature")
)

// errInternal reports a failure of the standard library that valid input cannot
// cause (for example, no randomness). It is unexported: callers cannot act on it.
var errInternal = errors.New("walletcrypto: internal error")

// internal wraps an unexpected error from the standard library.
func internal(detail string, cause error) error { return wrapCause(errInternal, detail, cause) }

// detailError adds a detail to a sentinel, and optionally carries a cause.
// Its message is "<sentinel>: <detail>"; it unwraps to the sentinel and the cause.
type detailError struct {
	sentinel error
	detail   string
	cause    error
}

func (e *detailError) Error() string { return e.sentinel.Error() + ": " + e.detail }

func (e *detailError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.sentinel}
	}
	return []error{e.sentinel, e.cause}
}

// wrap returns sentinel with a detail message.
func wrap(sentinel error, detail string) error {
	return &detailError{sentinel: sentinel, detail: detail}
}

// wrapCause is wrap with an underlying cause that errors.Is and errors.As can reach,
// but whose text is not part of the message.
func wrapCause(sentinel error, detail string, cause error) error {
	return &detailError{sentinel: sentinel, detail: detail, cause: cause}
}

// malformed is shorthand for wrap(ErrMalformed, detail).
func malformed(detail string) error { return wrap(ErrMalformed, detail) }
