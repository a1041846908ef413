package service

import (
	"context"
	"crypto/subtle"
	"net/http"

	"paywallet/service/payments"
)

// tokenRoutes are the platform's API tokens and what the service tells of
// itself: the End User Terms, the UMA providers and the VASPs it knows.
func (s *Service) tokenRoutes() []route {
	return []route{
		{"POST", "/tokens", s.createToken, authPlatform},
		{"GET", "/tokens", s.listTokens, authPlatform},
		{"GET", "/tokens/{tokenId}", s.getToken, authPlatform},
		{"DELETE", "/tokens/{tokenId}", s.deleteToken, authPlatform},
		{"GET", "/customers/end-user-terms", s.endUserTerms, authPlatform},
		{"GET", "/uma-providers", s.umaProviders, authPlatform},
		{"GET", "/vasps", s.vasps, authPlatform},
	}
}

func (s *Service) createToken(w http.ResponseWriter, r *http.Request) error {
	var req payments.APITokenRequest
	if _, err := decodeBody(r, &req, false); err != nil {
		return err
	}
	t, err := s.ops.CreateAPIToken(r.Context(), principalOf(r), req)
	if err == nil {
		w.Header().Set("Cache-Control", "no-store") // the answer holds the secret
	}
	return reply(w, http.StatusCreated, t, err)
}

func (s *Service) listTokens(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	out, err := s.ops.ListAPITokens(r.Context(), payments.APITokenFilter{
		Name:          q.Get("name"),
		CreatedAfter:  q.Get("createdAfter"),
		CreatedBefore: q.Get("createdBefore"),
		UpdatedAfter:  q.Get("updatedAfter"),
		UpdatedBefore: q.Get("updatedBefore"),
		Page:          page(r),
	})
	return reply(w, http.StatusOK, out, err)
}

func (s *Service) getToken(w http.ResponseWriter, r *http.Request) error {
	t, err := s.ops.GetAPIToken(r.Context(), r.PathValue("tokenId"))
	return reply(w, http.StatusOK, t, err)
}

func (s *Service) deleteToken(w http.ResponseWriter, r *http.Request) error {
	if err := readEmptyBody(r); err != nil {
		return err
	}
	if err := s.ops.DeleteAPIToken(r.Context(), r.PathValue("tokenId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Service) endUserTerms(w http.ResponseWriter, r *http.Request) error {
	t, err := s.ops.CurrentEndUserTerms(r.Context())
	return reply(w, http.StatusOK, t, err)
}

func (s *Service) umaProviders(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	out, err := s.ops.UmaProviders(r.Context(), payments.UmaProviderFilter{
		CountryCode:         q.Get("countryCode"),
		CurrencyCode:        q.Get("currencyCode"),
		HasBlockedProviders: q.Get("hasBlockedProviders"),
		SortOrder:           q.Get("sortOrder"),
		Page:                page(r),
	})
	return reply(w, http.StatusOK, out, err)
}

func (s *Service) vasps(w http.ResponseWriter, r *http.Request) error {
	out, err := s.ops.Vasps(r.Context(), page(r))
	return reply(w, http.StatusOK, out, err)
}

// EndUserTerms is a version of the End User Terms (Config.EndUserTerms).
type EndUserTerms = payments.EndUserTerms

type principalKey struct{}

// principalOf is the credential an authPlatform or authSandbox route was
// called with.
func principalOf(r *http.Request) payments.Principal {
	p, _ := r.Context().Value(principalKey{}).(payments.Principal)
	return p
}

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
// FORBIDDEN). A platform route missing from routePermission is refused to
// every token (only the configured credential passes);
// TestEveryPlatformRouteHasAPermission keeps the table complete.
func permit(rt route, p payments.Principal) error {
	if p.TokenID == "" { // the configured credential
		return nil
	}
	need, ok := routePermission[rt.method+" "+rt.path]
	if !ok {
		return &payments.Error{Code: payments.CodeForbidden, Message: "only the configured platform credential may call " + rt.method + " " + rt.path}
	}
	if !p.Has(need) {
		return &payments.Error{Code: payments.CodeForbidden, Message: "this API token lacks the " + need + " permission " + rt.method + " " + rt.path + " needs",
			Details: map[string]any{"requiredPermission": need}}
	}
	return nil
}

// withPrincipal stores the principal in the request's context.
func withPrincipal(r *http.Request, p payments.Principal) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
}

// routePermission is the permission an API token needs for each platform
// route (the reference's Permission): VIEW for every read, TRANSACT for
// what moves money or decides a payment (quotes and their execution,
// transfers, approving, rejecting, cancelling and confirming transactions,
// the sandbox's payments and funding), MANAGE for what changes customers,
// their wallets' credentials and sessions, accounts, agents, the
// platform's configuration, webhooks and tokens.
var routePermission = map[string]string{
	"GET /customers":                                          payments.PermissionView,
	"GET /customers/internal-accounts":                        payments.PermissionView,
	"GET /customers/{customerId}":                             payments.PermissionView,
	"GET /customers/end-user-terms":                           payments.PermissionView,
	"POST /customers":                                         payments.PermissionManage,
	"PATCH /customers/{customerId}":                           payments.PermissionManage,
	"DELETE /customers/{customerId}":                          payments.PermissionManage,
	"PATCH /internal-accounts/{id}":                           payments.PermissionManage,
	"POST /internal-accounts/{id}/export":                     payments.PermissionManage,
	"GET /auth/credentials":                                   payments.PermissionView,
	"POST /auth/credentials":                                  payments.PermissionManage,
	"DELETE /auth/credentials/{id}":                           payments.PermissionManage,
	"POST /auth/credentials/{id}/challenge":                   payments.PermissionManage,
	"POST /auth/credentials/{id}/verify":                      payments.PermissionManage,
	"GET /auth/sessions":                                      payments.PermissionView,
	"DELETE /auth/sessions/{id}":                              payments.PermissionManage,
	"POST /auth/sessions/{id}/refresh":                        payments.PermissionManage,
	"GET /discoveries":                                        payments.PermissionView,
	"POST /customers/external-accounts":                       payments.PermissionManage,
	"GET /customers/external-accounts":                        payments.PermissionView,
	"GET /customers/external-accounts/{externalAccountId}":    payments.PermissionView,
	"DELETE /customers/external-accounts/{externalAccountId}": payments.PermissionManage,
	"POST /platform/external-accounts":                        payments.PermissionManage,
	"GET /platform/external-accounts":                         payments.PermissionView,
	"GET /platform/external-accounts/{externalAccountId}":     payments.PermissionView,
	"DELETE /platform/external-accounts/{externalAccountId}":  payments.PermissionManage,
	"GET /platform/internal-accounts":                         payments.PermissionView,
	"GET /receiver/external-account/{accountId}":              payments.PermissionView,
	"GET /receiver/uma/{receiverUmaAddress}":                  payments.PermissionView,
	"POST /agents":                                            payments.PermissionManage,
	"GET /agents/{agentId}":                                   payments.PermissionView,
	"PATCH /agents/{agentId}":                                 payments.PermissionManage,
	"POST /agents/{agentId}/device-codes":                     payments.PermissionManage,
	"GET /agents/device-codes/{code}/status":                  payments.PermissionView,
	"GET /agents":                                             payments.PermissionView,
	"GET /agents/approvals":                                   payments.PermissionView,
	"DELETE /agents/{agentId}":                                payments.PermissionManage,
	"PATCH /agents/{agentId}/policy":                          payments.PermissionManage,
	"POST /agents/{agentId}/actions/{actionId}/approve":       payments.PermissionTransact,
	"POST /agents/{agentId}/actions/{actionId}/reject":        payments.PermissionTransact,
	"GET /exchange-rates":                                     payments.PermissionView,
	"POST /quotes":                                            payments.PermissionTransact,
	"GET /quotes/{quoteId}":                                   payments.PermissionView,
	"POST /quotes/{quoteId}/execute":                          payments.PermissionTransact,
	"GET /transactions":                                       payments.PermissionView,
	"GET /transactions/{transactionId}":                       payments.PermissionView,
	"POST /transactions/{transactionId}/confirm":              payments.PermissionTransact,
	"POST /transactions/{transactionId}/cancel":               payments.PermissionTransact,
	"POST /transactions/{transactionId}/approve":              payments.PermissionTransact,
	"POST /transactions/{transactionId}/reject":               payments.PermissionTransact,
	"POST /transfer-in":                                       payments.PermissionTransact,
	"POST /transfer-out":                                      payments.PermissionTransact,
	"POST /sandbox/internal-accounts/{accountId}/fund":        payments.PermissionTransact,
	"POST /sandbox/send":                                      payments.PermissionTransact,
	"POST /sandbox/uma/receive":                               payments.PermissionTransact,
	"POST /sandbox/webhooks/test":                             payments.PermissionManage,
	"GET /internal-accounts/{id}/entries":                     payments.PermissionView,
	"GET /ledger/accounts":                                    payments.PermissionView,
	"GET /ledger/transactions/{id}":                           payments.PermissionView,
	"GET /ledger/head":                                        payments.PermissionView,
	"GET /config":                                             payments.PermissionView,
	"PATCH /config":                                           payments.PermissionManage,
	"GET /webhooks/deliveries":                                payments.PermissionView,
	"POST /webhooks/deliveries/{id}/replay":                   payments.PermissionManage,
	"POST /tokens":                                            payments.PermissionManage,
	"GET /tokens":                                             payments.PermissionView,
	"GET /tokens/{tokenId}":                                   payments.PermissionView,
	"DELETE /tokens/{tokenId}":                                payments.PermissionManage,
	"GET /uma-providers":                                      payments.PermissionView,
	"GET /vasps":                                              payments.PermissionView,
}
