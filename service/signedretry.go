package service

import (
	"net/http"
	"strings"

	"paywallet/service/payments"
	"paywallet/shared/wire"
)

// signedCall reads what a signed operation needs of the request: the
// canonical hash of its body and, on a retry, the Service-Wallet-Signature
// and Request-Id headers, which must come together (SignedCall.Check).
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
	c := payments.SignedCall{
		Stamp:     strings.TrimSpace(r.Header.Get(wire.HeaderWalletSignature)),
		RequestID: strings.TrimSpace(r.Header.Get(wire.HeaderRequestID)),
	}
	// A body that is not JSON has no canonical hash; decoding it refuses
	// the request before any operation sees the hash.
	c.BodyHash, _ = payments.CanonicalBodyHash(body)
	return c
}
