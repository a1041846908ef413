package payments

import (
	"context"
	"time"

	"paywallet/service/oidc"
)

// OAuth credentials (grid-api-facts §3.3): an OIDC ID token names the
// identity (iss, sub, aud). The service trusts only the issuers in
// Config.OIDCProviders and checks every token's signature against the
// issuer's published keys. Sandbox mode additionally accepts, as the
// reference sandbox does (facts §5), tokens of the well-known public
// issuers with any signature when those issuers are not configured; the
// claims are still checked.

// sandboxIssuers are the issuers the reference sandbox accepts unsigned.
var sandboxIssuers = map[string]bool{
	"https://accounts.google.com": true,
	"accounts.google.com":         true,
	"https://appleid.apple.com":   true,
}

// maxTokenAge is how old an ID token's iat may be (facts §3.3), and
// tokenSkew how far in the future it may lie.
const (
	maxTokenAge = 60 * time.Second
	tokenSkew   = 5 * time.Second
)

// verifyOIDCToken checks a token and answers the reference's statuses:
// 400 for a malformed token or an issuer that is not trusted, 401 for a
// token that must not be believed, 503 when the issuer's keys cannot be
// fetched.
func (s *Service) verifyOIDCToken(ctx context.Context, raw, field string) (*oidc.Token, error) {
	parsed, err := oidc.Parse(raw)
	if err != nil {
		return nil, invalidField(field, "not a well-formed OIDC ID token (JWS compact serialization)")
	}
	if s.oidc == nil || !s.oidc.Trusted(parsed.Issuer) {
		if s.mode == ModeSandbox && sandboxIssuers[parsed.Issuer] {
			if !s.now().Before(parsed.Expiry) {
				return nil, errorf(CodeUnauthorized, "the OIDC token has expired")
			}
			return parsed, nil
		}
		return nil, invalidField(field, "the token's issuer is not one this service trusts")
	}
	token, err := s.oidc.Verify(ctx, raw)
	switch oidc.KindOf(err) {
	case 0:
		return token, nil
	case oidc.KindMalformed:
		return nil, invalidField(field, "not a well-formed OIDC ID token")
	case oidc.KindUntrustedIssuer:
		return nil, invalidField(field, "the token's issuer is not one this service trusts")
	case oidc.KindUnavailable:
		s.log.WarnContext(ctx, "OIDC issuer keys unavailable", "issuer", parsed.Issuer, "err", err)
		return nil, errorf(CodeServiceUnavailable, "the identity provider's keys could not be fetched; try again shortly")
	}
	return nil, errorf(CodeUnauthorized, "the OIDC token was refused: "+err.Error())
}

// fresh applies the freshness rule: iat at most 60 seconds old and not
// more than a few seconds ahead of the service's clock.
func (s *Service) fresh(t *oidc.Token) error {
	now := s.now()
	if t.IssuedAt.Before(now.Add(-maxTokenAge)) {
		return errorf(CodeUnauthorized, "the OIDC token was issued more than 60 seconds ago; sign in with the provider again")
	}
	if t.IssuedAt.After(now.Add(tokenSkew)) {
		return errorf(CodeUnauthorized, "the OIDC token's iat lies in the future")
	}
	return nil
}

// audienceFor is the audience an OAUTH credential is bound to: the
// configured client id of a trusted issuer, or for a sandbox issuer the
// token's first audience.
func (s *Service) audienceFor(t *oidc.Token) string {
	for _, p := range s.cfg.OIDCProviders {
		if p.Issuer == t.Issuer {
			return p.ClientID
		}
	}
	if len(t.Audience) > 0 {
		return t.Audience[0]
	}
	return ""
}
