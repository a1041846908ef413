package payments

import (
	"context"
	"errors"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/shared/webhooksig"
	"paywallet/shared/wire"
)

// CreateCustomer creates a customer (POST /customers). A customer created
// with an e-mail gets, in the same transaction, its EMBEDDED_WALLET internal
// account and an EMAIL_OTP credential whose nickname is that e-mail (facts
// §4.6).
func (s *Service) CreateCustomer(ctx context.Context, req wire.CustomerCreateRequest) (wire.Customer, error) {
	var fe fieldErrors
	req.PlatformCustomerID = strings.TrimSpace(req.PlatformCustomerID)
	switch {
	case req.PlatformCustomerID == "":
		fe.add("platformCustomerId", "required")
	case utf8.RuneCountInString(req.PlatformCustomerID) > 255:
		fe.addConstraint("platformCustomerId", "at most 255 characters", wire.FieldConstraint{MaxLength: new(255)})
	}
	checkCustomerType(req.CustomerType, true, &fe)
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
		return wire.Customer{}, e
	}

	now := s.now()
	id := ids.New("Customer")
	uma := req.UmaAddress
	if uma == "" {
		uma = "$" + strings.ReplaceAll(strings.TrimPrefix(id, "Customer:"), "-", "")[:16] + "@" + s.cfg.UMADomain
	}
	return commit(ctx, s, "", func(tx store.Tx) (wire.Customer, error) {
		c := store.Customer{
			ID:                 id,
			PlatformCustomerID: req.PlatformCustomerID,
			CustomerType:       req.CustomerType,
			Email:              req.Email,
			FullName:           req.FullName,
			UmaAddress:         uma,
			CreatedAt:          now,
			UpdatedAt:          now,
		}
		if err := tx.CreateCustomer(ctx, &c); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return wire.Customer{}, errorf(CodeConflict, "a customer with this platformCustomerId already exists")
			}
			return wire.Customer{}, err
		}
		if c.Email != "" {
			if err := s.provisionWallet(ctx, tx, &c); err != nil {
				return wire.Customer{}, err
			}
		}
		return customerJSON(&c), nil
	})
}

// customerTypes are the values of a customer's customerType.
var customerTypes = []string{"INDIVIDUAL", "BUSINESS"}

// checkCustomerType records a customerType that is not one of
// customerTypes in fe; an empty one is "required" when required is set,
// else no filter.
func checkCustomerType(t string, required bool, fe *fieldErrors) {
	switch {
	case slices.Contains(customerTypes, t):
	case t == "" && required:
		fe.add("customerType", "required")
	case t != "":
		fe.addConstraint("customerType", "must be INDIVIDUAL or BUSINESS", wire.FieldConstraint{Enum: customerTypes})
	}
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

// errCustomerNotFound answers a customer id that is malformed or unknown.
var errCustomerNotFound = errorf(CodeUserNotFound, "no customer with this id")

// loadCustomer loads the customer id; a malformed or unknown id is
// errCustomerNotFound.
func loadCustomer(ctx context.Context, tx store.Tx, id string) (*store.Customer, error) {
	if !ids.Valid("Customer", id) {
		return nil, errCustomerNotFound
	}
	c, err := tx.GetCustomer(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errCustomerNotFound
	}
	return c, err
}

// GetCustomer is the customer with this id (GET /customers/{customerId}).
func (s *Service) GetCustomer(ctx context.Context, id string) (wire.Customer, error) {
	return read(ctx, s, func(tx store.Tx) (wire.Customer, error) {
		c, err := loadCustomer(ctx, tx, id)
		if err != nil {
			return wire.Customer{}, err
		}
		return customerJSON(c), nil
	})
}

// CustomerFilter is the request of ListCustomers (the query of GET
// /customers): each filter applies when not empty.
type CustomerFilter struct {
	PlatformCustomerID string
	CustomerType       string // INDIVIDUAL or BUSINESS
	Page               PageRequest
}

// ListCustomers is a page of the platform's customers (GET /customers),
// with the total count of those the filter matches.
func (s *Service) ListCustomers(ctx context.Context, req CustomerFilter) (wire.List[wire.Customer], error) {
	var fe fieldErrors
	f := store.CustomerFilter{PlatformCustomerID: req.PlatformCustomerID, CustomerType: req.CustomerType}
	f.Limit, f.Cursor = req.Page.check("Customer", &fe)
	checkCustomerType(f.CustomerType, false, &fe)
	if e := fe.err(); e != nil {
		return wire.List[wire.Customer]{}, e
	}
	return listPage(ctx, s, func(tx store.Tx) (store.Page[store.Customer], error) { return tx.ListCustomers(ctx, f) },
		customerJSON)
}

// internalAccountTypes are the values of an internal account's type.
var internalAccountTypes = []string{"INTERNAL_FIAT", "INTERNAL_CRYPTO", "EMBEDDED_WALLET"}

// InternalAccountFilter is the request of ListInternalAccounts (the query
// of GET /customers/internal-accounts): each filter applies when not empty.
type InternalAccountFilter struct {
	CustomerID string
	Type       string // INTERNAL_FIAT, INTERNAL_CRYPTO or EMBEDDED_WALLET
	Currency   string
	Page       PageRequest
}

// ListInternalAccounts is a page of internal accounts (GET
// /customers/internal-accounts), with the total count of those the filter
// matches.
func (s *Service) ListInternalAccounts(ctx context.Context, req InternalAccountFilter) (wire.List[wire.InternalAccount], error) {
	var fe fieldErrors
	f := store.InternalAccountFilter{CustomerID: req.CustomerID, Type: req.Type, Currency: req.Currency}
	f.Limit, f.Cursor = req.Page.check("InternalAccount", &fe)
	if f.CustomerID != "" && !ids.Valid("Customer", f.CustomerID) {
		fe.add("customerId", "must be a Customer:<uuid> id")
	}
	if f.Type != "" && !slices.Contains(internalAccountTypes, f.Type) {
		fe.addConstraint("type", "unknown internal account type", wire.FieldConstraint{Enum: internalAccountTypes})
	}
	if f.Currency != "" && !currencyCode(f.Currency) {
		fe.addConstraint("currency", "must be a three-letter currency code", wire.FieldConstraint{Pattern: "^[A-Z]{3,4}$"})
	}
	if e := fe.err(); e != nil {
		return wire.List[wire.InternalAccount]{}, e
	}
	return listPage(ctx, s, func(tx store.Tx) (store.Page[store.InternalAccount], error) { return tx.ListInternalAccounts(ctx, f) },
		s.internalAccountJSON)
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
		FundingPaymentInstructions: s.fundingInstructions(a),
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
