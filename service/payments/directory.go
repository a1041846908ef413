package payments

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"paywallet/service/rates"
	"paywallet/shared/accountrules"
	"paywallet/shared/wire"
)

// # What the service knows of itself: End User Terms, UMA providers, VASPs
//
// GET /customers/end-user-terms, GET /uma-providers and GET /vasps answer
// from the configuration only. This service is on no UMA network and keeps
// no directory of exchanges, so the UMA providers and the VASPs it lists
// are itself alone (the domain of its UMA addresses), never third parties
// it has no dealings with.

// EndUserTerms is one version of the End User Terms (the reference's
// EndUserTerms): a customer's endUserTermsConsent.termsVersion must name
// one of Config.EndUserTerms.
type EndUserTerms struct {
	Version string `json:"version"`
	URL     string `json:"url"`
}

// CodeEndUserTermsVersionNotFound refuses a termsVersion that names no
// configured version.
const CodeEndUserTermsVersionNotFound = "END_USER_TERMS_VERSION_NOT_FOUND"

// msgUnknownTermsVersion marks the field error termsErr turns into
// END_USER_TERMS_VERSION_NOT_FOUND.
const msgUnknownTermsVersion = "names no version of the End User Terms; GET /customers/end-user-terms gives the current one"

// defaultEndUserTerms is the terms of a service configured without any:
// V1, at /end-user-terms on the UMA domain, where the operator publishes
// them (the README's configuration says to set --end-user-terms).
func defaultEndUserTerms(umaDomain string) []EndUserTerms {
	return []EndUserTerms{{Version: "V1", URL: "https://" + umaDomain + "/end-user-terms"}}
}

// checkEndUserTerms refuses an unusable terms list at start: each version
// named (at most 64 characters, no comma or '='), once, with an absolute
// http(s) URL.
func checkEndUserTerms(ts []EndUserTerms) error {
	seen := map[string]bool{}
	for _, t := range ts {
		if t.Version == "" || len(t.Version) > maxIdentifierLikeLength || strings.ContainsAny(t.Version, ",= \t") {
			return fmt.Errorf("service: End User Terms version %q: want 1 to 64 characters without spaces, commas or '='", t.Version)
		}
		if seen[t.Version] {
			return fmt.Errorf("service: End User Terms version %q is given twice", t.Version)
		}
		seen[t.Version] = true
		u, err := url.Parse(t.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("service: End User Terms version %q: the URL %q is not an absolute http(s) URL", t.Version, t.URL)
		}
	}
	return nil
}

// endUserTerms are the configured versions, the current one last.
func (s *Service) endUserTerms() []EndUserTerms {
	if len(s.cfg.EndUserTerms) == 0 {
		return defaultEndUserTerms(s.cfg.UMADomain)
	}
	return s.cfg.EndUserTerms
}

// knownTermsVersion reports whether v names a configured version (exactly).
func (s *Service) knownTermsVersion(v string) bool {
	for _, t := range s.endUserTerms() {
		if t.Version == v {
			return true
		}
	}
	return false
}

// CurrentEndUserTerms is the current version of the End User Terms (GET
// /customers/end-user-terms): the last configured one. Customers may also
// have accepted the earlier configured versions.
func (s *Service) CurrentEndUserTerms(context.Context) (EndUserTerms, error) {
	ts := s.endUserTerms()
	return ts[len(ts)-1], nil
}

// termsErr is fe.err(), except that a refusal whose only bad field is an
// unknown endUserTermsConsent.termsVersion is the reference's 400
// END_USER_TERMS_VERSION_NOT_FOUND (still naming the field in
// details.errors). Beside other bad fields it stays INVALID_INPUT, naming
// them all.
func (fe fieldErrors) termsErr() *Error {
	e := fe.err()
	if e != nil && len(fe) == 1 && fe[0].Field == "endUserTermsConsent.termsVersion" && fe[0].Message == msgUnknownTermsVersion {
		e.Code = CodeEndUserTermsVersionNotFound
		e.Message = "endUserTermsConsent.termsVersion " + msgUnknownTermsVersion
	}
	return e
}

// UmaProvider is an entry of GET /uma-providers (the reference's
// UmaProvider).
type UmaProvider struct {
	Name                string          `json:"name"`
	Domain              string          `json:"domain"`
	SupportedCurrencies []wire.Currency `json:"supportedCurrencies"`
	AllowListStatus     bool            `json:"allowListStatus"`
}

// UmaProviderFilter is the query of GET /uma-providers.
type UmaProviderFilter struct {
	CountryCode         string `query:"countryCode"`
	CurrencyCode        string `query:"currencyCode"`
	HasBlockedProviders string `query:"hasBlockedProviders"`
	SortOrder           string `query:"sortOrder"`
	Page                PageRequest
}

// onlyEntryCursor checks the paging of a list of at most one entry: the
// limit as every list's; no page ever has a next one, so any cursor is one
// this list never returned.
func onlyEntryCursor(p PageRequest, fe *fieldErrors) {
	p.check("", fe)
}

// UmaProviders lists the UMA providers this service knows (GET
// /uma-providers): itself alone, under its UMA domain, with the currencies
// its rates table handles, on the allow-list. countryCode and
// currencyCode filter as the reference says (the service names no regions,
// so a country never excludes it); hasBlockedProviders changes nothing, as
// no provider is blocked.
func (s *Service) UmaProviders(_ context.Context, req UmaProviderFilter) (wire.List[UmaProvider], error) {
	var fe fieldErrors
	onlyEntryCursor(req.Page, &fe)
	if req.CountryCode != "" && !accountrules.CountryCode(req.CountryCode) {
		fe.addConstraint("countryCode", "must be an ISO 3166-1 alpha-2 country code such as US", wire.FieldConstraint{Pattern: countryPattern})
	}
	if req.CurrencyCode != "" && !currencyCodeRE.MatchString(req.CurrencyCode) {
		fe.addConstraint("currencyCode", "must be an ISO 4217 currency code such as USD", wire.FieldConstraint{Pattern: currencyCodePattern})
	}
	// Checked, and otherwise without effect: no provider is blocked, and
	// one entry has no order.
	boolParam(&fe, "hasBlockedProviders", req.HasBlockedProviders)
	descending(&fe, req.SortOrder, false)
	if e := fe.err(); e != nil {
		return wire.List[UmaProvider]{}, e
	}
	self := UmaProvider{Name: s.cfg.UMADomain, Domain: s.cfg.UMADomain, SupportedCurrencies: []wire.Currency{}, AllowListStatus: true}
	for _, c := range s.rates.Currencies() {
		self.SupportedCurrencies = append(self.SupportedCurrencies, currencyWire(c))
	}
	out := wire.List[UmaProvider]{Data: []UmaProvider{}, TotalCount: new(0)}
	if req.CurrencyCode != "" {
		if _, ok := s.rates.Currency(req.CurrencyCode); !ok {
			return out, nil
		}
	}
	out.Data = append(out.Data, self)
	*out.TotalCount = 1
	return out, nil
}

const currencyCodePattern = `^[A-Z]{3}$`

var currencyCodeRE = regexp.MustCompile(currencyCodePattern)

func currencyWire(c rates.Currency) wire.Currency {
	return wire.Currency{Code: c.Code, Name: c.Name, Symbol: c.Symbol, Decimals: c.Decimals}
}

// Vasp is an entry of GET /vasps (the reference's Vasp).
type Vasp struct {
	VaspName string `json:"vaspName"`
}

// Vasps is the VASP directory of this service (GET /vasps): itself alone,
// named by its UMA domain, as it custodies its customers' embedded
// wallets. It keeps no directory of exchanges, and a counterparty's
// vaspName is not checked against this list.
func (s *Service) Vasps(_ context.Context, page PageRequest) (wire.List[Vasp], error) {
	var fe fieldErrors
	onlyEntryCursor(page, &fe)
	if e := fe.err(); e != nil {
		return wire.List[Vasp]{}, e
	}
	return wire.List[Vasp]{Data: []Vasp{{VaspName: s.cfg.UMADomain}}}, nil
}
