package service

import (
	"net/http"
	"strings"

	"paywallet/service/payments"
	"paywallet/shared/wire"
)

// signedCall reads what a signed operation needs of the request: the
// canonical hash of its body and, on a retry, the Service-Wallet-Signature
// and the challenge's id in Request-Id, which must come together
// (SignedCall.Check).
// route.call reads it before it decodes the body, so a header problem is
// answered first.
func signedCall(r *http.Request, body []byte) (payments.SignedCall, error) {
	c := retryHeaders(r, body)
	if err := c.Check(); err != nil {
		return c, err
	}
	return c, nil
}

// retryHeaders is signedCall without the check, for the one operation that
// checks the pairing itself (credential verify: only its e-mail code leg is
// a signed retry).
func retryHeaders(r *http.Request, body []byte) payments.SignedCall {
	c := payments.SignedCall{Stamp: strings.TrimSpace(r.Header.Get(wire.HeaderWalletSignature))}
	// Only a challenge's id is half of a signed retry. Any other
	// Request-Id is the caller's correlation id (the request's own id,
	// observe.go) and is ignored here, as the spec ignores both headers
	// on the initial call: a BFF that sends its request id on every call
	// does not turn a first call into a half-signed retry.
	if id := strings.TrimSpace(r.Header.Get(wire.HeaderRequestID)); payments.IsChallengeID(id) {
		c.RequestID = id
	}
	// A body that is not JSON has no canonical hash; decoding it refuses
	// the request before any operation sees the hash.
	c.BodyHash, _ = payments.CanonicalBodyHash(body)
	return c
}
