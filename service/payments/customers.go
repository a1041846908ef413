package payments

import (
	"context"
	"errors"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/shared/webhooksig"
	"paywallet/shared/wire"
)

// CreateCustomer creates a customer (POST /customers) with every field of
// the reference's create request: the fields of its type (an INDIVIDUAL's
// birthDate, nationality, identification and due-diligence fields; a
// BUSINESS's businessInfo, required), checked and stored. The
// identification number (identifier) is write-only: it is stored sealed
// with the at-rest key and no answer carries it. platformCustomerId is
// optional: one is generated when absent; it is unique among customers that
// are not deleted.
//
// kycStatus (individuals) and kybStatus (businesses) are set in sandbox
// mode only, from the reference sandbox's magic suffixes (sandboxKYC,
// sandboxKYB), with the CUSTOMER.KYC_* or CUSTOMER.KYB_* event of the
// status; in production the service verifies no identities and the answer
// carries no status.
//
// A customer created with an e-mail gets, in the same transaction, its
// EMBEDDED_WALLET internal account and an EMAIL_OTP credential whose
// nickname is that e-mail (facts §4.6).
func (s *Service) CreateCustomer(ctx context.Context, req wire.CustomerCreateRequest) (wire.Customer, error) {
	var fe fieldErrors
	now := s.now()
	check := fieldChecker{fe: &fe, now: now, s: s}
	req.PlatformCustomerID = strings.TrimSpace(req.PlatformCustomerID)
	if utf8.RuneCountInString(req.PlatformCustomerID) > 255 {
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
	check.readOnlyStatuses(req.KYCStatus, req.KYBStatus)
	check.common(&req.CustomerCommon, true)
	check.otherType(req.CustomerType, &req.IndividualFields, req.Identifier, req.FullName, req.BusinessInfo)
	switch req.CustomerType {
	case "INDIVIDUAL":
		check.individual(&req.IndividualFields)
		check.individualCross(&req.IndividualFields, req.Identifier)
	case "BUSINESS":
		if req.BusinessInfo == nil {
			fe.add("businessInfo", "required for a BUSINESS customer (legalName, country, taxId, incorporatedOn)")
		} else {
			check.business(req.BusinessInfo, true)
			check.businessCross(req.BusinessInfo)
		}
	}
	if e := fe.termsErr(); e != nil {
		return wire.Customer{}, e
	}

	id := ids.New("Customer")
	hexID := strings.ReplaceAll(strings.TrimPrefix(id, "Customer:"), "-", "")
	uma := req.UmaAddress
	if uma == "" {
		// The whole id: its first half is a UUIDv7's timestamp and 12
		// random bits, which customers created in one millisecond share
		// one time in 4096.
		uma = "$" + hexID + "@" + s.cfg.UMADomain
	}
	pcid := req.PlatformCustomerID
	if pcid == "" {
		pcid = hexID
	}
	profile := customerProfile{CustomerCommon: req.CustomerCommon, IndividualFields: req.IndividualFields, BusinessInfo: req.BusinessInfo}
	doc, err := encodeProfile(&profile)
	if err != nil {
		return wire.Customer{}, err
	}
	return commit(ctx, s, "", nil, func(tx store.Tx) (wire.Customer, error) {
		c := store.Customer{
			ID:                 id,
			PlatformCustomerID: pcid,
			CustomerType:       req.CustomerType,
			Email:              req.Email,
			FullName:           req.FullName,
			UmaAddress:         uma,
			CreatedAt:          now,
			UpdatedAt:          now,
			Profile:            doc,
		}
		if req.Identifier != "" {
			c.Identifier = s.box.Seal([]byte(req.Identifier), identifierLabel(id))
		}
		if s.mode == ModeSandbox {
			switch c.CustomerType {
			case "INDIVIDUAL":
				c.KYCStatus = sandboxKYC(c.FullName)
			case "BUSINESS":
				c.KYBStatus = sandboxKYB(req.BusinessInfo.RegistrationNumber)
			}
		}
		if err := umaTaken(ctx, tx, c.UmaAddress, c.ID); err != nil {
			return wire.Customer{}, err
		}
		if err := tx.CreateCustomer(ctx, &c); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return wire.Customer{}, &Error{Code: CodeConflict, Message: "a customer with this platformCustomerId already exists",
					Details: map[string]any{"platformCustomerId": pcid}}
			}
			return wire.Customer{}, err
		}
		if c.Email != "" {
			if err := s.provisionWallet(ctx, tx, &c); err != nil {
				return wire.Customer{}, err
			}
		}
		out := customerJSON(&c)
		if typ := verificationEventType(&c); typ != "" {
			if err := s.emit(ctx, tx, typ, c.ID, out); err != nil {
				return wire.Customer{}, err
			}
		}
		return out, nil
	})
}

// umaTaken refuses an umaAddress that another live customer has (409
// CONFLICT naming it): incoming UMA payments find their customer by the
// address, so a second customer with it could never be paid. self is the
// customer being written.
func umaTaken(ctx context.Context, tx store.Tx, addr, self string) error {
	other, err := tx.GetCustomerByUmaAddress(ctx, addr)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	case other.ID == self:
		return nil
	}
	return &Error{Code: CodeConflict, Message: "another customer has this umaAddress; choose another",
		Details: map[string]any{"umaAddress": addr}}
}

// identifierLabel binds a sealed identification number to its customer.
func identifierLabel(customerID string) string { return customerID + "/identifier" }

// The reference's customer webhook types (WebhookType: CUSTOMER.*). It has
// none for creation, update or deletion.
const (
	eventKYCApproved = "CUSTOMER.KYC_APPROVED"
	eventKYCRejected = "CUSTOMER.KYC_REJECTED"
	eventKYCPending  = "CUSTOMER.KYC_PENDING"
	eventKYBApproved = "CUSTOMER.KYB_APPROVED"
	eventKYBRejected = "CUSTOMER.KYB_REJECTED"
	eventKYBPending  = "CUSTOMER.KYB_PENDING"
)

// verificationEventType is the CUSTOMER.* event of the customer's KYC or
// KYB status; none for UNVERIFIED (the reference has no such type) or
// no status.
func verificationEventType(c *store.Customer) string {
	switch {
	case c.KYCStatus == "APPROVED":
		return eventKYCApproved
	case c.KYCStatus == "REJECTED":
		return eventKYCRejected
	case c.KYCStatus == "PENDING":
		return eventKYCPending
	case c.KYBStatus == "APPROVED":
		return eventKYBApproved
	case c.KYBStatus == "REJECTED":
		return eventKYBRejected
	case c.KYBStatus == "PENDING":
		return eventKYBPending
	}
	return ""
}

// sandboxKYC is the KYC status the reference sandbox gives an individual
// from the last three characters of fullName (grid-api-facts §5): 001
// PENDING, 002 REJECTED, 003 UNVERIFIED, anything else APPROVED.
func sandboxKYC(fullName string) string {
	switch suffix3(fullName) {
	case "001":
		return "PENDING"
	case "002":
		return "REJECTED"
	case "003":
		return "UNVERIFIED"
	}
	return "APPROVED"
}

// sandboxKYB is the KYB status of a business from the last three
// characters of businessInfo.registrationNumber: 002 REJECTED; 001 and 003
// (where the reference runs its real validation) PENDING and UNVERIFIED,
// as for KYC, since this service has no validation to run; anything else
// APPROVED.
func sandboxKYB(registrationNumber string) string {
	return sandboxKYC(registrationNumber)
}

func suffix3(s string) string {
	if len(s) < 3 {
		return s
	}
	return s[len(s)-3:]
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
	PlatformCustomerID string `query:"platformCustomerId"`
	CustomerType       string `query:"customerType"` // INDIVIDUAL or BUSINESS
	// IsIncludingDeleted is the query's isIncludingDeleted: "true" lists
	// deleted customers too; empty or "false" leaves them out.
	IsIncludingDeleted string `query:"isIncludingDeleted"`
	Page               PageRequest
}

// ListCustomers is a page of the platform's customers (GET /customers),
// with the total count of those the filter matches.
func (s *Service) ListCustomers(ctx context.Context, req CustomerFilter) (wire.List[wire.Customer], error) {
	var fe fieldErrors
	f := store.CustomerFilter{PlatformCustomerID: req.PlatformCustomerID, CustomerType: req.CustomerType}
	f.Limit, f.Cursor = req.Page.check("Customer", &fe)
	checkCustomerType(f.CustomerType, false, &fe)
	switch req.IsIncludingDeleted {
	case "", "false":
	case "true":
		f.IncludeDeleted = true
	default:
		fe.add("isIncludingDeleted", "must be true or false")
	}
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
	CustomerID string `query:"customerId"`
	Type       string `query:"type"` // INTERNAL_FIAT, INTERNAL_CRYPTO or EMBEDDED_WALLET
	Currency   string `query:"currency"`
	Page       PageRequest
}

// ListInternalAccounts is a page of internal accounts (GET
// /customers/internal-accounts), with the total count of those the filter
// matches.
func (s *Service) ListInternalAccounts(ctx context.Context, req InternalAccountFilter) (wire.List[wire.InternalAccount], error) {
	var fe fieldErrors
	f := internalAccountFilter(req, &fe)
	if f.CustomerID != "" && !ids.Valid("Customer", f.CustomerID) {
		fe.add("customerId", "must be a Customer:<uuid> id")
	}
	if e := fe.err(); e != nil {
		return wire.List[wire.InternalAccount]{}, e
	}
	return s.listInternalAccounts(ctx, f)
}

// internalAccountFilter checks the filters of an internal-account list
// but the customer (the platform's and an agent's lists bind it
// differently) and builds the store's filter, recording bad values in fe.
func internalAccountFilter(req InternalAccountFilter, fe *fieldErrors) store.InternalAccountFilter {
	f := store.InternalAccountFilter{CustomerID: req.CustomerID, Type: req.Type, Currency: req.Currency}
	f.Limit, f.Cursor = req.Page.check("InternalAccount", fe)
	if f.Type != "" && !slices.Contains(internalAccountTypes, f.Type) {
		fe.addConstraint("type", "unknown internal account type", wire.FieldConstraint{Enum: internalAccountTypes})
	}
	if f.Currency != "" && !currencyCode(f.Currency) {
		fe.addConstraint("currency", "must be a three-letter currency code", wire.FieldConstraint{Pattern: "^[A-Z]{3,4}$"})
	}
	return f
}

// listInternalAccounts is one page of the internal accounts f selects.
func (s *Service) listInternalAccounts(ctx context.Context, f store.InternalAccountFilter) (wire.List[wire.InternalAccount], error) {
	return listPage(ctx, s, func(tx store.Tx) (store.Page[store.InternalAccount], error) { return tx.ListInternalAccounts(ctx, f) },
		s.internalAccountJSON)
}

// PageRequest is the paging of a list operation, as the query gives it:
// Limit, from 1 to 100 (20 when empty), and Cursor, the nextCursor of the
// page before. They stay text so that the operation names a bad value
// among the request's other bad fields, in one answer.
type PageRequest struct {
	Limit  string `query:"limit"`
	Cursor string `query:"cursor"`
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

// customerJSON is the customer as the API answers it: the reference's
// IndividualCustomer or BusinessCustomer (the fields of its type only),
// never the identification number.
func customerJSON(c *store.Customer) wire.Customer {
	p := decodeProfile(c.Profile)
	out := wire.Customer{
		ID:                 c.ID,
		PlatformCustomerID: c.PlatformCustomerID,
		CustomerType:       c.CustomerType,
		UmaAddress:         c.UmaAddress,
		Email:              c.Email,
		CreatedAt:          timestamp(c.CreatedAt),
		UpdatedAt:          timestamp(c.UpdatedAt),
		CustomerCommon:     p.CustomerCommon,
		IsDeleted:          !c.DeletedAt.IsZero(),
	}
	switch c.CustomerType {
	case "BUSINESS":
		out.KYBStatus = c.KYBStatus
		out.BusinessInfo = p.BusinessInfo
	default:
		out.FullName = c.FullName
		out.KYCStatus = c.KYCStatus
		out.IndividualFields = p.IndividualFields
	}
	return out
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

// CodeCustomerDeleted answers an operation on a deleted customer (410 in
// the reference).
const CodeCustomerDeleted = "CUSTOMER_DELETED"

func errCustomerDeleted(id string) *Error {
	return &Error{Code: CodeCustomerDeleted, Message: "the customer was deleted", Details: map[string]any{"customerId": id}}
}

// DeleteCustomer deletes a customer (DELETE /customers/{customerId}) and
// answers it as it is now (isDeleted true). It is refused (409 CONFLICT,
// details naming the accounts and the count of payments) while one of the
// customer's internal accounts holds money, available or held, or a
// payment of the customer is in flight (store.Tx.PaymentsInFlight); a
// customer already deleted is 410 CUSTOMER_DELETED.
//
// Otherwise, in one transaction: the customer is marked deleted; every
// credential of its internal accounts is removed, with every session it
// issued and its OTP codes, so nobody can sign in again (and the e-mail is
// free to sign up as a new customer); its internal accounts become CLOSED
// (no funding, payment, credential or wallet operation accepts a closed
// account) and its external accounts INACTIVE, each with its
// STATUS_UPDATED event; its platformCustomerId is free for a new customer.
// The customer stays readable: GET answers it with isDeleted true, lists
// leave it out unless isIncludingDeleted=true, PATCH answers 410. The
// reference has no webhook type for a deleted customer.
func (s *Service) DeleteCustomer(ctx context.Context, id string) (wire.Customer, error) {
	return commit(ctx, s, "", nil, func(tx store.Tx) (wire.Customer, error) {
		c, err := loadCustomer(ctx, tx, id)
		if err != nil {
			return wire.Customer{}, err
		}
		if !c.DeletedAt.IsZero() {
			return wire.Customer{}, errCustomerDeleted(c.ID)
		}
		accounts, err := customerAccounts(ctx, tx, c.ID)
		if err != nil {
			return wire.Customer{}, err
		}
		var funded []map[string]any
		for i := range accounts {
			if a := &accounts[i]; a.Available != 0 || a.Held != 0 {
				funded = append(funded, map[string]any{"accountId": a.ID, "available": a.Available, "held": a.Held, "currency": a.Currency})
			}
		}
		inFlight, err := tx.PaymentsInFlight(ctx, c.ID)
		if err != nil {
			return wire.Customer{}, err
		}
		if len(funded) > 0 || inFlight > 0 {
			if funded == nil {
				funded = []map[string]any{}
			}
			return wire.Customer{}, &Error{Code: CodeConflict,
				Message: "the customer still has money: move every balance out and wait for payments in flight to finish before deleting it",
				Details: map[string]any{"fundedAccounts": funded, "paymentsInFlight": inFlight}}
		}
		now := s.now()
		if _, err := tx.DeleteCustomer(ctx, c.ID, now); err != nil {
			return wire.Customer{}, err
		}
		for i := range accounts {
			a := &accounts[i]
			// The credentials' sessions go with them: each active one
			// is a session the platform revoked, in the customer's log.
			active, err := tx.ListActiveSessions(ctx, a.ID, now)
			if err != nil {
				return wire.Customer{}, err
			}
			for j := range active {
				if err := s.recordSecurity(ctx, tx, securityRecord{customerID: c.ID, accountID: a.ID, typ: SecuritySessionRevoked,
					details: map[string]any{"sessionId": active[j].ID, "by": RevokedByPlatform}}); err != nil {
					return wire.Customer{}, err
				}
			}
			creds, err := tx.ListCredentials(ctx, a.ID)
			if err != nil {
				return wire.Customer{}, err
			}
			for _, cred := range creds {
				if err := tx.DeleteCredential(ctx, cred.ID); err != nil {
					return wire.Customer{}, err
				}
			}
			if a.Status == "CLOSED" {
				continue
			}
			if err := tx.SetInternalAccountStatus(ctx, a.ID, "CLOSED", now); err != nil {
				return wire.Customer{}, err
			}
			a.Status, a.UpdatedAt = "CLOSED", now
			if err := s.emit(ctx, tx, webhooksig.InternalAccountStatusUpdated, a.ID, s.internalAccountJSON(a)); err != nil {
				return wire.Customer{}, err
			}
		}
		if err := s.deactivateExternalAccounts(ctx, tx, c.ID, now); err != nil {
			return wire.Customer{}, err
		}
		c, err = tx.GetCustomer(ctx, c.ID)
		if err != nil {
			return wire.Customer{}, err
		}
		return customerJSON(c), nil
	})
}

// customerAccounts is every internal account of the customer.
func customerAccounts(ctx context.Context, tx store.Tx, customerID string) ([]store.InternalAccount, error) {
	var out []store.InternalAccount
	cursor := ""
	for {
		page, err := tx.ListInternalAccounts(ctx, store.InternalAccountFilter{CustomerID: customerID, Limit: 100, Cursor: cursor})
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if !page.HasMore {
			return out, nil
		}
		cursor = page.NextCursor
	}
}

// deactivateExternalAccounts makes every external account of the customer
// INACTIVE, keeping its verification result, with its event.
func (s *Service) deactivateExternalAccounts(ctx context.Context, tx store.Tx, customerID string, now time.Time) error {
	var all []store.ExternalAccount
	cursor := ""
	for {
		page, err := tx.ListExternalAccounts(ctx, store.ExternalAccountFilter{CustomerID: customerID, Limit: 100, Cursor: cursor})
		if err != nil {
			return err
		}
		all = append(all, page.Items...)
		if !page.HasMore {
			break
		}
		cursor = page.NextCursor
	}
	for i := range all {
		a := &all[i]
		if a.Status == "INACTIVE" {
			continue
		}
		err := tx.UpdateExternalAccountStatus(ctx, a.ID, store.ExternalAccountStatusUpdate{Status: "INACTIVE",
			BeneficiaryVerificationStatus: a.BeneficiaryVerificationStatus, BeneficiaryVerifiedData: a.BeneficiaryVerifiedData}, now)
		if err != nil {
			return err
		}
		updated, err := tx.GetExternalAccount(ctx, a.ID)
		if err != nil {
			return err
		}
		if err := s.emit(ctx, tx, webhooksig.ExternalAccountStatusUpdated, updated.ID, externalAccountJSON(updated)); err != nil {
			return err
		}
	}
	return nil
}
