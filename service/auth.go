package service

import (
	"crypto/subtle"
	"net/http"

	"paywallet/service/payments"
)

// EndUserTerms is a version of the End User Terms (Config.EndUserTerms).
type EndUserTerms = payments.EndUserTerms

// platformPrincipal checks the Basic credential: the configured one
// (compared in constant time, both halves always, so the time does not
// tell which one was wrong) holds every permission; anything else must be
// an API token, read from the store on every request so that a deleted
// token is refused at once on every instance.
func (s *Service) platformPrincipal(r *http.Request) (payments.Principal, error) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		return payments.Principal{}, payments.ErrPlatformUnauthorized
	}
	idOK := subtle.ConstantTimeCompare([]byte(id), []byte(s.tokenID))
	secretOK := subtle.ConstantTimeCompare([]byte(secret), []byte(s.secret))
	if idOK&secretOK == 1 {
		return payments.ConfiguredCredential, nil
	}
	return s.ops.AuthenticateAPIToken(r.Context(), id, secret)
}

// permit refuses a route the principal lacks the permission of (403
// FORBIDDEN): the route line names the permission (route.go).
func permit(rt route, p payments.Principal) error {
	if p.TokenID == "" || p.Has(rt.need.name) { // the configured credential holds every one
		return nil
	}
	return &payments.Error{Code: payments.CodeForbidden, Message: "this API token lacks the " + rt.need.name + " permission " + rt.method + " " + rt.path + " needs",
		Details: map[string]any{"requiredPermission": rt.need.name}}
}
