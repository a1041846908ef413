package service

import (
	"net/http"
	"strings"

	"paywallet/service/payments"
	"paywallet/shared/wire"
)

// signedCall reads what a signed operation needs of the request: the
// canonical hash of its body and, on a retry, the Service-Wallet-Signature
// and Request-Id headers. Both headers must come together: a signature
// without Request-Id is REQUEST_ID_MISSING, a Request-Id without a signature
// is WALLET_SIGNATURE_MISSING (facts §4.6). Handlers read it before they
// decode the body, so a header problem is answered first.
func signedCall(r *http.Request, body []byte) (payments.SignedCall, error) {
	c := payments.SignedCall{
		Stamp:     strings.TrimSpace(r.Header.Get(wire.HeaderWalletSignature)),
		RequestID: strings.TrimSpace(r.Header.Get(wire.HeaderRequestID)),
	}
	switch {
	case c.Stamp == "" && c.RequestID != "":
		return c, errorf(http.StatusUnauthorized, payments.CodeSignatureMissing, "Request-Id was sent without Service-Wallet-Signature")
	case c.Stamp != "" && c.RequestID == "":
		return c, errorf(http.StatusUnauthorized, payments.CodeRequestIDMissing, "Service-Wallet-Signature was sent without Request-Id")
	}
	// A body that is not JSON has no canonical hash; decoding it refuses
	// the request before any operation sees the hash.
	c.BodyHash, _ = payments.CanonicalBodyHash(body)
	return c, nil
}
