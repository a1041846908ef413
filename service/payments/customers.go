package payments

import (
	"context"
	"errors"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"unicode/utf8"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/shared/webhooksig"
	"paywallet/shared/wire"
)

// createCustomer handles POST /customers. A customer created with an e-mail
// gets, in the same transaction, its EMBEDDED_WALLET internal account and an
// EMAIL_OTP credential whose nickname is that e-mail (facts §4.6).
func (s *Service) createCustomer(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var req wire.CustomerCreateRequest
	if err := decodeJSON(r, body, &req, false); err != nil {
		return err
	}
	var fe fieldErrors
	req.PlatformCustomerID = strings.TrimSpace(req.PlatformCustomerID)
	switch {
	case req.PlatformCustomerID == "":
		fe.add("platformCustomerId", "required")
	case utf8.RuneCountInString(req.PlatformCustomerID) > 255:
		fe.addConstraint("platformCustomerId", "at most 255 characters", wire.FieldConstraint{MaxLength: new(255)})
	}
	switch req.CustomerType {
	case "INDIVIDUAL", "BUSINESS":
	case "":
		fe.add("customerType", "required")
	default:
		fe.addConstraint("customerType", "must be INDIVIDUAL or BUSINESS", wire.FieldConstraint{Enum: []string{"INDIVIDUAL", "BUSINESS"}})
	}
	if req.Email != "" && !validEmail(req.Email) {
		fe.addConstraint("email", "must be an e-mail address such as name@example.com", wire.FieldConstraint{Format: "email"})
	}
	if utf8.RuneCountInString(req.FullName) > 255 {
		fe.addConstraint("fullName", "at most 255 characters", wire.FieldConstraint{MaxLength: new(255)})
	}
	if req.UmaAddress != "" && !validUMA(req.UmaAddress) {
		fe.addConstraint("umaAddress", "must look like $name@domain", wire.FieldConstraint{Pattern: umaPattern})
	}
	if e := fe.err(); e != nil {
		return e
	}

	now := s.now()
	c := store.Customer{
		ID:                 ids.New("Customer"),
		PlatformCustomerID: req.PlatformCustomerID,
		CustomerType:       req.CustomerType,
		Email:              req.Email,
		FullName:           req.FullName,
		UmaAddress:         req.UmaAddress,
		CreatedAt:          now,
		UpdatedAt:          now,
	}
	if c.UmaAddress == "" {
		c.UmaAddress = "$" + strings.ReplaceAll(strings.TrimPrefix(c.ID, "Customer:"), "-", "")[:16] + "@" + s.cfg.UMADomain
	}
	err = s.store.Tx(r.Context(), func(tx store.Tx) error {
		if err := tx.CreateCustomer(r.Context(), &c); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return errorf(CodeConflict, "a customer with this platformCustomerId already exists")
			}
			return err
		}
		if c.Email == "" {
			return nil
		}
		return s.provisionWallet(r.Context(), tx, &c)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, customerJSON(&c))
	return nil
}

// provisionWallet creates the customer's embedded wallet and its EMAIL_OTP
// credential inside the customer's creation transaction.
func (s *Service) provisionWallet(ctx context.Context, tx store.Tx, c *store.Customer) error {
	acct := store.InternalAccount{
		ID:         ids.New("InternalAccount"),
		CustomerID: c.ID,
		Type:       "EMBEDDED_WALLET",
		Status:     "ACTIVE",
		Currency:   s.cfg.WalletCurrency,
		CreatedAt:  c.CreatedAt,
		UpdatedAt:  c.CreatedAt,
	}
	var err error
	if acct.WalletSecret, err = s.newWalletSecret(acct.ID); err != nil {
		return err
	}
	if err := tx.CreateInternalAccount(ctx, &acct); err != nil {
		return err
	}
	if err := s.emit(ctx, tx, webhooksig.InternalAccountStatusUpdated, acct.ID, s.internalAccountJSON(&acct)); err != nil {
		return err
	}
	cred := store.Credential{
		ID:        ids.New("AuthMethod"),
		AccountID: acct.ID,
		Type:      wire.TypeEmailOTP,
		Nickname:  c.Email,
		CreatedAt: c.CreatedAt,
		UpdatedAt: c.CreatedAt,
	}
	if err := tx.CreateCredential(ctx, &cred); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return errorf(CodeEmailAlreadyExists, "this e-mail address already signs in to another wallet")
		}
		return err
	}
	return nil
}

func (s *Service) getCustomer(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("customerId")
	notFound := errorf(CodeUserNotFound, "no customer with this id")
	if !ids.Valid("Customer", id) {
		return notFound
	}
	var c *store.Customer
	err := s.store.Tx(r.Context(), func(tx store.Tx) error {
		var err error
		c, err = tx.GetCustomer(r.Context(), id)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return notFound
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, customerJSON(c))
	return nil
}

func (s *Service) listCustomers(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var fe fieldErrors
	limit, cursor := pageParams(q, "Customer", &fe)
	f := store.CustomerFilter{PlatformCustomerID: q.Get("platformCustomerId"), CustomerType: q.Get("customerType"), Limit: limit, Cursor: cursor}
	if f.CustomerType != "" && f.CustomerType != "INDIVIDUAL" && f.CustomerType != "BUSINESS" {
		fe.addConstraint("customerType", "must be INDIVIDUAL or BUSINESS", wire.FieldConstraint{Enum: []string{"INDIVIDUAL", "BUSINESS"}})
	}
	if e := fe.err(); e != nil {
		return e
	}
	var page store.Page[store.Customer]
	err := s.store.Tx(r.Context(), func(tx store.Tx) error {
		var err error
		page, err = tx.ListCustomers(r.Context(), f)
		return err
	})
	if err != nil {
		return err
	}
	out := wire.List[wire.Customer]{Data: make([]wire.Customer, 0, len(page.Items)), HasMore: page.HasMore, NextCursor: page.NextCursor, TotalCount: &page.TotalCount}
	for i := range page.Items {
		out.Data = append(out.Data, customerJSON(&page.Items[i]))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Service) listInternalAccounts(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var fe fieldErrors
	limit, cursor := pageParams(q, "InternalAccount", &fe)
	f := store.InternalAccountFilter{CustomerID: q.Get("customerId"), Type: q.Get("type"), Currency: q.Get("currency"), Limit: limit, Cursor: cursor}
	if f.CustomerID != "" && !ids.Valid("Customer", f.CustomerID) {
		fe.add("customerId", "must be a Customer:<uuid> id")
	}
	switch f.Type {
	case "", "EMBEDDED_WALLET", "INTERNAL_FIAT", "INTERNAL_CRYPTO":
	default:
		fe.addConstraint("type", "unknown internal account type", wire.FieldConstraint{Enum: []string{"INTERNAL_FIAT", "INTERNAL_CRYPTO", "EMBEDDED_WALLET"}})
	}
	if f.Currency != "" && !currencyCode(f.Currency) {
		fe.addConstraint("currency", "must be a three-letter currency code", wire.FieldConstraint{Pattern: "^[A-Z]{3,4}$"})
	}
	if e := fe.err(); e != nil {
		return e
	}
	var page store.Page[store.InternalAccount]
	err := s.store.Tx(r.Context(), func(tx store.Tx) error {
		var err error
		page, err = tx.ListInternalAccounts(r.Context(), f)
		return err
	})
	if err != nil {
		return err
	}
	out := wire.List[wire.InternalAccount]{Data: make([]wire.InternalAccount, 0, len(page.Items)), HasMore: page.HasMore, NextCursor: page.NextCursor, TotalCount: &page.TotalCount}
	for i := range page.Items {
		out.Data = append(out.Data, s.internalAccountJSON(&page.Items[i]))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// PageRequest is the paging of a list operation, as the query gives it:
// Limit, from 1 to 100 (20 when empty), and Cursor, the nextCursor of the
// page before. They stay text so that the operation names a bad value
// among the request's other bad fields, in one answer.
type PageRequest struct {
	Limit  string
	Cursor string
}

// check reads the page's limit and cursor (an id of the listed type),
// recording bad values in fe.
func (p PageRequest) check(idType string, fe *fieldErrors) (limit int, cursor string) {
	limit = 20
	if p.Limit != "" {
		n, err := strconv.Atoi(p.Limit)
		if err != nil || n < 1 || n > 100 {
			fe.add("limit", "must be an integer from 1 to 100")
		} else {
			limit = n
		}
	}
	if p.Cursor != "" && !ids.Valid(idType, p.Cursor) {
		fe.add("cursor", "is not a cursor returned by this list")
	}
	return limit, p.Cursor
}

// pageParams reads limit (1..100, default 20) and cursor (an id of the
// listed type) and records bad values in fe.
func pageParams(q map[string][]string, idType string, fe *fieldErrors) (int, string) {
	limit := 20
	if vs, ok := q["limit"]; ok {
		n, err := strconv.Atoi(vs[0])
		if err != nil || n < 1 || n > 100 {
			fe.add("limit", "must be an integer from 1 to 100")
		} else {
			limit = n
		}
	}
	var cursor string
	if vs, ok := q["cursor"]; ok {
		cursor = vs[0]
		if !ids.Valid(idType, cursor) {
			fe.add("cursor", "is not a cursor returned by this list")
		}
	}
	return limit, cursor
}

func customerJSON(c *store.Customer) wire.Customer {
	return wire.Customer{
		ID:                 c.ID,
		PlatformCustomerID: c.PlatformCustomerID,
		CustomerType:       c.CustomerType,
		UmaAddress:         c.UmaAddress,
		Email:              c.Email,
		FullName:           c.FullName,
		CreatedAt:          timestamp(c.CreatedAt),
		UpdatedAt:          timestamp(c.UpdatedAt),
	}
}

func (s *Service) internalAccountJSON(a *store.InternalAccount) wire.InternalAccount {
	cur := s.currencyJSON(a.Currency)
	out := wire.InternalAccount{
		ID:                         a.ID,
		CustomerID:                 a.CustomerID,
		Type:                       a.Type,
		Status:                     a.Status,
		Balance:                    wire.CurrencyAmount{Amount: a.Available, Currency: cur},
		TotalBalance:               wire.CurrencyAmount{Amount: a.Available + a.Held, Currency: cur},
		FundingPaymentInstructions: []wire.PaymentInstructions{},
		CreatedAt:                  timestamp(a.CreatedAt),
		UpdatedAt:                  timestamp(a.UpdatedAt),
	}
	if a.Type == "EMBEDDED_WALLET" {
		out.PrivateEnabled = new(a.PrivateEnabled)
	}
	return out
}

// validEmail accepts a bare addr-spec (no display name) with a dotted domain.
func validEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	return at > 0 && strings.Contains(s[at+1:], ".") && !strings.HasSuffix(s, ".")
}

const umaPattern = `^\$[a-zA-Z0-9._-]{1,64}@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$`

func validUMA(s string) bool {
	at := strings.IndexByte(s, '@')
	if len(s) < 4 || s[0] != '$' || at < 2 || at > 65 {
		return false
	}
	for _, c := range s[1:at] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	domain := s[at+1:]
	dot := strings.LastIndexByte(domain, '.')
	if dot <= 0 || len(domain)-dot-1 < 2 {
		return false
	}
	for _, c := range domain {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

func currencyCode(s string) bool {
	if len(s) < 3 || len(s) > 4 {
		return false
	}
	for _, c := range s {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// legacyCustomerRoutes are this area's handlers that are not yet operations (see
// LegacyRoutes).
func (s *Service) legacyCustomerRoutes() map[string]LegacyHandler {
	return map[string]LegacyHandler{
		"POST /customers":                     s.createCustomer,
		"GET /customers":                      s.listCustomers,
		"GET /customers/internal-accounts":    s.listInternalAccounts,
		"GET /customers/{customerId}":         s.getCustomer,
		"PATCH /customers/{customerId}":       s.updateCustomer,
		"PATCH /internal-accounts/{id}":       s.updateInternalAccount,
		"POST /internal-accounts/{id}/export": s.exportWallet,
	}
}
