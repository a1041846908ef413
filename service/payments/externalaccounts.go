package payments

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/shared/accountrules"
	"paywallet/shared/banks"
	"paywallet/shared/webhooksig"
	"paywallet/shared/wire"
)

// External accounts are destinations outside the service. Creation runs the
// shared validator (paywallet/shared/accountrules, the same code the BFF and
// the browser run), then stores the accountInfo as canonical JSON. Wallet
// accounts (SPARK_WALLET) are ACTIVE at once; bank and mobile-money accounts
// start PENDING and the verifier decides (see verifyOutcome).

// DiscoveryFilter is the query of Discoveries: an ISO 3166 country code
// and an ISO 4217 currency code, each optional.
type DiscoveryFilter struct {
	Country  string `query:"country"`
	Currency string `query:"currency"`
}

// Discoveries lists the banks an external account can name (GET
// /discoveries?country=&currency=), for the country and currency when given.
func (s *Service) Discoveries(ctx context.Context, f DiscoveryFilter) (wire.Data[banks.Bank], error) {
	var fe fieldErrors
	if f.Country != "" && !upperLetters(f.Country, 2) {
		fe.addConstraint("country", "must be a two-letter country code such as PH", wire.FieldConstraint{Pattern: "^[A-Z]{2}$"})
	}
	if f.Currency != "" && !upperLetters(f.Currency, 3) {
		fe.addConstraint("currency", "must be a three-letter currency code such as PHP", wire.FieldConstraint{Pattern: "^[A-Z]{3}$"})
	}
	if e := fe.err(); e != nil {
		return wire.Data[banks.Bank]{}, e
	}
	return wire.Data[banks.Bank]{Data: banks.List(f.Country, f.Currency)}, nil
}

func upperLetters(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range s {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// fingerprint identifies an account's destination for the duplicate check:
// the SHA-256 of the owner, the currency and the canonical JSON of
// accountInfo (beneficiary included), with the identifiers the rules read
// case-insensitively (a Spark address, an IBAN) in one case, so that
// "SPARK1…" and "spark1…" are one account. platformAccountId,
// ownershipType and defaultUmaDepositAccount are not part of it: the same
// destination under another platform reference is still a duplicate.
func fingerprint(customerID, currency string, info map[string]any) ([]byte, error) {
	norm := make(map[string]any, len(info))
	for k, v := range info {
		norm[k] = v
	}
	if a, ok := norm["address"].(string); ok && norm["accountType"] == "SPARK_WALLET" {
		norm["address"] = strings.ToLower(a)
	}
	if iban, ok := norm["iban"].(string); ok {
		norm["iban"] = strings.ToUpper(iban)
	}
	canonical, err := json.Marshal(norm)
	if err != nil {
		return nil, err
	}
	fp := sha256.New()
	fp.Write([]byte(customerID + "\x00" + currency + "\x00"))
	fp.Write(canonical)
	return fp.Sum(nil), nil
}

// ExternalAccountRequest is the request of CreateExternalAccount: whose
// account it is and the body of the POST, a JSON object the shared
// validator (accountrules.ValidateCreate) checks.
type ExternalAccountRequest struct {
	// Platform is set for the platform's own account (POST
	// /platform/external-accounts), which has no customerId; unset, the
	// account is a customer's (POST /customers/external-accounts), or the
	// platform's when the body has no customerId (facts §3.2).
	Platform bool
	Body     map[string]any
}

// CreateExternalAccount creates an external account (POST
// /customers/external-accounts and POST /platform/external-accounts):
// ACTIVE at once for a SPARK_WALLET, PENDING for the verifier otherwise,
// with EXTERNAL_ACCOUNT.STATUS_UPDATED in the same transaction. The same
// destination twice for one owner is 409 (see fingerprint).
func (s *Service) CreateExternalAccount(ctx context.Context, req ExternalAccountRequest) (wire.ExternalAccount, error) {
	body := req.Body
	if body == nil {
		return wire.ExternalAccount{}, errorf(CodeInvalidRequestFormat, "the body must be a JSON object")
	}
	body, chosen, fe := checkExternalAccountBody(body)
	customerID, _ := body["customerId"].(string)
	if req.Platform && customerID != "" {
		fe.add("customerId", "platform accounts have no customer; use POST /customers/external-accounts")
	}
	if e := fe.err(); e != nil {
		return wire.ExternalAccount{}, e
	}
	info := body["accountInfo"].(map[string]any)
	accountType := info["accountType"].(string)
	currency := body["currency"].(string)
	// The duplicate check ignores the rails: the same destination paid on
	// other rails is still the same account.
	fp, err := fingerprint(customerID, currency, info)
	if err != nil {
		return wire.ExternalAccount{}, err
	}
	if chosen != nil {
		info["paymentRails"] = chosen
	}

	if s.mode == ModeSandbox && strings.HasSuffix(accountrules.PrimaryIdentifier(info), "105") {
		e := errorf("INVALID_BANK_ACCOUNT", "the receiving institution reports this account as invalid (sandbox pattern 105)")
		e.Details = map[string]any{"errors": []wire.FieldError{{Field: "accountInfo", Message: "account is invalid"}}}
		return wire.ExternalAccount{}, e
	}

	canonical, err := json.Marshal(info) // sorted keys, no whitespace
	if err != nil {
		return wire.ExternalAccount{}, err
	}
	now := s.now()
	a := store.ExternalAccount{
		ID:          ids.New("ExternalAccount"),
		CustomerID:  customerID,
		Currency:    currency,
		AccountType: accountType,
		AccountInfo: canonical,
		Status:      "PENDING",
		CreatedAt:   now,
		UpdatedAt:   now,
	}
	a.PlatformAccountID, _ = body["platformAccountId"].(string)
	a.OwnershipType, _ = body["ownershipType"].(string)
	a.DefaultUmaDepositAccount, _ = body["defaultUmaDepositAccount"].(bool)
	if accountType == "SPARK_WALLET" {
		// A self-custody wallet has no holder to verify (spec: ACTIVE at creation).
		a.Status = "ACTIVE"
	}
	a.Fingerprint = fp

	return commit(ctx, s, "", nil, func(tx store.Tx) (wire.ExternalAccount, error) {
		if customerID != "" {
			c, err := tx.GetCustomer(ctx, customerID)
			switch {
			case errors.Is(err, store.ErrNotFound):
				return wire.ExternalAccount{}, invalidField("customerId", "no customer with this id")
			case err != nil:
				return wire.ExternalAccount{}, err
			case !c.DeletedAt.IsZero():
				return wire.ExternalAccount{}, errCustomerDeleted(c.ID)
			}
		}
		err := tx.CreateExternalAccount(ctx, &a)
		if errors.Is(err, store.ErrConflict) {
			return wire.ExternalAccount{}, errorf(CodeConflict, "this external account already exists for this owner")
		}
		if err != nil {
			return wire.ExternalAccount{}, err
		}
		out := externalAccountJSON(&a)
		return out, s.emit(ctx, tx, webhooksig.ExternalAccountStatusUpdated, a.ID, out)
	})
}

// checkExternalAccountBody checks a create body, naming every bad field:
// the shared validator's rules (accountrules.ValidateCreate) on the body
// without accountInfo.paymentRails, and the rails apart (checkPaymentRails).
// It answers the body without the rails and the rails chosen (nil when none
// were given). The customer's, the platform's and the agent's creates all
// check with it.
func checkExternalAccountBody(body map[string]any) (map[string]any, []string, fieldErrors) {
	body, rails, given := takePaymentRails(body)
	fe := fieldErrors(accountrules.ValidateCreate(body))
	var chosen []string
	if given {
		chosen = checkPaymentRails(body, rails, &fe)
	}
	return body, chosen, fe
}

// takePaymentRails takes accountInfo.paymentRails out of a create body:
// the shared validator checks the reference's create shape, which has no
// such member, while the reference's own clients send one (its scripts
// create a USD account with paymentRails ["RTP"]) and the response shape
// has it. The body is copied, not changed. given reports whether the member
// was there.
func takePaymentRails(body map[string]any) (out map[string]any, rails any, given bool) {
	info, ok := body["accountInfo"].(map[string]any)
	if !ok {
		return body, nil, false
	}
	rails, given = info["paymentRails"]
	if !given {
		return body, nil, false
	}
	info = maps.Clone(info)
	delete(info, "paymentRails")
	out = maps.Clone(body)
	out["accountInfo"] = info
	return out, rails, true
}

// checkPaymentRails checks the paymentRails a create body gives: distinct
// rails the account type pays out on (see paymentRails), at least one. The
// account is then paid only on those, in the order given: the first is
// what a quote that names no rail uses. A SPARK_WALLET takes only the empty
// list, as its answer shows: it is paid over the Spark network, not a
// rail. It returns the rails (nil when a problem was recorded in fe).
func checkPaymentRails(body map[string]any, rails any, fe *fieldErrors) []string {
	const field = "accountInfo.paymentRails"
	list, ok := rails.([]any)
	if !ok {
		fe.add(field, "must be an array of payment rails")
		return nil
	}
	info := body["accountInfo"].(map[string]any)
	accountType, _ := info["accountType"].(string)
	if !slices.Contains(accountrules.AccountTypes(), accountType) {
		return nil // accountType is reported by the validator
	}
	offered := typeRails(accountType, info)
	if len(offered) == 0 {
		if len(list) > 0 {
			fe.add(field, "must be empty: a "+accountType+" account is paid without a payment rail")
			return nil
		}
		return []string{}
	}
	if len(list) == 0 {
		fe.addConstraint(field, "must name at least one rail of this account type", wire.FieldConstraint{Enum: offered})
		return nil
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		r, ok := v.(string)
		switch {
		case !ok || !slices.Contains(offered, r):
			fe.addConstraint(field, "a "+accountType+" account is paid on "+strings.Join(offered, ", ")+" only",
				wire.FieldConstraint{Enum: offered})
			return nil
		case slices.Contains(out, r):
			fe.add(field, "names "+r+" twice")
			return nil
		}
		out = append(out, r)
	}
	return out
}

// ExternalAccountFilter is the query of ListExternalAccounts.
type ExternalAccountFilter struct {
	// Platform lists the platform's own accounts (GET
	// /platform/external-accounts), which have no customer, so CustomerID
	// must be empty. Unset, CustomerID picks one customer's accounts (GET
	// /customers/external-accounts?customerId=); without it every
	// customer's accounts are listed. The platform's accounts are never
	// listed there.
	Platform   bool
	CustomerID string `query:"customerId"`
	Currency   string `query:"currency"` // optional
	Page       PageRequest
}

// ListExternalAccounts is a page of the customer's or the platform's
// external accounts (GET /customers/external-accounts and GET
// /platform/external-accounts), with their total count.
func (s *Service) ListExternalAccounts(ctx context.Context, q ExternalAccountFilter) (wire.List[wire.ExternalAccount], error) {
	var fe fieldErrors
	f := store.ExternalAccountFilter{CustomerID: q.CustomerID, Platform: q.Platform, Currency: q.Currency}
	switch {
	case q.Platform && f.CustomerID != "":
		fe.add("customerId", "platform accounts have no customer; use GET /customers/external-accounts")
	case q.Platform:
	case f.CustomerID == "":
		f.AllCustomers = true
	case !ids.Valid("Customer", f.CustomerID):
		fe.add("customerId", "must be a Customer:<uuid> id")
	}
	f.Limit, f.Cursor = q.Page.check("ExternalAccount", &fe)
	if f.Currency != "" && !currencyCode(f.Currency) {
		fe.addConstraint("currency", "must be a currency code such as USD or BTC", wire.FieldConstraint{Pattern: "^[A-Z]{3,4}$"})
	}
	if e := fe.err(); e != nil {
		return wire.List[wire.ExternalAccount]{}, e
	}
	return read(ctx, s, func(tx store.Tx) (wire.List[wire.ExternalAccount], error) {
		page, err := tx.ListExternalAccounts(ctx, f)
		if err != nil {
			return wire.List[wire.ExternalAccount]{}, err
		}
		out := wire.List[wire.ExternalAccount]{Data: make([]wire.ExternalAccount, 0, len(page.Items)), HasMore: page.HasMore, NextCursor: page.NextCursor, TotalCount: &page.TotalCount}
		for i := range page.Items {
			out.Data = append(out.Data, externalAccountJSON(&page.Items[i]))
		}
		return out, nil
	})
}

// ExternalAccountRef names an external account in a path: a customer's
// (/customers/external-accounts/{id}) or, with Platform, the platform's
// (/platform/external-accounts/{id}). An account of the other kind is 404
// there, as an unknown one is, the way the lists keep the two apart.
type ExternalAccountRef struct {
	Platform bool
	ID       string
}

// GetExternalAccount is one external account of a customer (GET
// /customers/external-accounts/{externalAccountId}) or of the platform
// (GET /platform/external-accounts/{externalAccountId}).
func (s *Service) GetExternalAccount(ctx context.Context, ref ExternalAccountRef) (wire.ExternalAccount, error) {
	a, err := read(ctx, s, func(tx store.Tx) (*store.ExternalAccount, error) { return loadOwnedExternalAccount(ctx, tx, ref) })
	if err != nil {
		return wire.ExternalAccount{}, err
	}
	return externalAccountJSON(a), nil
}

// DeactivateExternalAccount disables an external account (DELETE
// /customers/external-accounts/{externalAccountId} and DELETE
// /platform/external-accounts/{externalAccountId}, answered 204): status
// INACTIVE; it stays readable so transactions that name it keep their
// reference. Deactivating an INACTIVE account changes nothing and emits no
// event.
func (s *Service) DeactivateExternalAccount(ctx context.Context, ref ExternalAccountRef) error {
	_, err := commit(ctx, s, "", nil, func(tx store.Tx) (struct{}, error) {
		a, err := loadOwnedExternalAccount(ctx, tx, ref)
		if err != nil {
			return struct{}{}, err
		}
		err = tx.UpdateExternalAccountStatus(ctx, a.ID, store.ExternalAccountStatusUpdate{
			Status:                        "INACTIVE",
			BeneficiaryVerificationStatus: a.BeneficiaryVerificationStatus,
			BeneficiaryVerifiedData:       a.BeneficiaryVerifiedData,
		}, s.now())
		if err != nil || a.Status == "INACTIVE" {
			return struct{}{}, err
		}
		return struct{}{}, s.emitExternalAccount(ctx, tx, a.ID)
	})
	return err
}

// loadExternalAccount loads an account in its own transaction; a malformed
// or unknown id is 404.
func (s *Service) loadExternalAccount(ctx context.Context, id string) (*store.ExternalAccount, error) {
	return read(ctx, s, func(tx store.Tx) (*store.ExternalAccount, error) { return loadExternalAccount(ctx, tx, id) })
}

// loadOwnedExternalAccount loads the account ref names; an account of the
// other kind (a platform account on a customer path, a customer's on the
// platform path) is the same 404 as an unknown id.
func loadOwnedExternalAccount(ctx context.Context, tx store.Tx, ref ExternalAccountRef) (*store.ExternalAccount, error) {
	a, err := loadExternalAccount(ctx, tx, ref.ID)
	if err == nil && (a.CustomerID == "") != ref.Platform {
		if ref.Platform {
			return nil, errorf(CodeNotFound, "no platform external account with this id")
		}
		return nil, errorf(CodeNotFound, "no external account with this id")
	}
	return a, err
}

func loadExternalAccount(ctx context.Context, tx store.Tx, id string) (*store.ExternalAccount, error) {
	notFound := errorf(CodeNotFound, "no external account with this id")
	if !ids.Valid("ExternalAccount", id) {
		return nil, notFound
	}
	a, err := tx.GetExternalAccount(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound
	}
	return a, err
}

// externalAccountJSON renders an account; the response accountInfo carries
// paymentRails: those the platform chose at creation, else every rail of
// the account type (facts §3.2).
func externalAccountJSON(a *store.ExternalAccount) wire.ExternalAccount {
	var info map[string]any
	if err := json.Unmarshal(a.AccountInfo, &info); err != nil || info == nil {
		info = map[string]any{"accountType": a.AccountType}
	}
	info["paymentRails"] = paymentRails(a.AccountType, info)
	out := wire.ExternalAccount{
		ID:                            a.ID,
		CustomerID:                    a.CustomerID,
		Status:                        a.Status,
		Currency:                      a.Currency,
		PlatformAccountID:             a.PlatformAccountID,
		OwnershipType:                 a.OwnershipType,
		AccountInfo:                   info,
		DefaultUmaDepositAccount:      a.DefaultUmaDepositAccount,
		BeneficiaryVerificationStatus: a.BeneficiaryVerificationStatus,
		CreatedAt:                     timestamp(a.CreatedAt),
		UpdatedAt:                     timestamp(a.UpdatedAt),
	}
	if len(a.BeneficiaryVerifiedData) > 0 {
		var v map[string]any
		if json.Unmarshal(a.BeneficiaryVerifiedData, &v) == nil {
			out.BeneficiaryVerifiedData = v
		}
	}
	return out
}

// paymentRails are the rails an account is paid on: those its stored
// accountInfo names (chosen at creation, see checkPaymentRails), else every
// rail its type pays out on (facts §6).
func paymentRails(accountType string, info map[string]any) []string {
	if chosen, ok := info["paymentRails"].([]any); ok {
		out := make([]string, 0, len(chosen))
		for _, r := range chosen {
			if name, ok := r.(string); ok {
				out = append(out, name)
			}
		}
		return out
	}
	return typeRails(accountType, info)
}

// typeRails are the rails an account type pays out on (facts §6): the
// variants table of shared/accountrules says, BANK_TRANSFER for a type it
// does not know.
func typeRails(accountType string, info map[string]any) []string {
	if rails := accountrules.Rails(accountType, info); rails != nil {
		return rails
	}
	return []string{"BANK_TRANSFER"}
}

// verifyOutcome is the verifier's decision for a PENDING account. There is
// no name-check provider behind this service, so in production the result
// is UNSUPPORTED and the account becomes ACTIVE. In sandbox mode the last
// three digits of the primary identifier choose the outcome (facts §5):
// 102 NOT_MATCHED and 103 PARTIAL_MATCH need review (UNDER_REVIEW), 104
// leaves verification PENDING, 106 UNSUPPORTED and 107
// CHECKED_BY_RECEIVING_FI are usable, anything else MATCHED.
func (s *Service) verifyOutcome(a *store.ExternalAccount) store.ExternalAccountStatusUpdate {
	if s.mode != ModeSandbox {
		return store.ExternalAccountStatusUpdate{Status: "ACTIVE", BeneficiaryVerificationStatus: "UNSUPPORTED"}
	}
	var info map[string]any
	_ = json.Unmarshal(a.AccountInfo, &info)
	id := accountrules.PrimaryIdentifier(info)
	suffix := ""
	if len(id) >= 3 {
		suffix = id[len(id)-3:]
	}
	switch suffix {
	case "102":
		return store.ExternalAccountStatusUpdate{Status: "UNDER_REVIEW", BeneficiaryVerificationStatus: "NOT_MATCHED"}
	case "103":
		// The bank holds a name close to, not equal to, the one given; the
		// platform sees it in beneficiaryVerifiedData to decide.
		u := store.ExternalAccountStatusUpdate{Status: "UNDER_REVIEW", BeneficiaryVerificationStatus: "PARTIAL_MATCH"}
		if name := partialName(beneficiaryName(info)); name != "" {
			u.BeneficiaryVerifiedData, _ = json.Marshal(map[string]string{"fullName": name})
		}
		return u
	case "104":
		return store.ExternalAccountStatusUpdate{Status: "PENDING", BeneficiaryVerificationStatus: "PENDING"}
	case "106":
		return store.ExternalAccountStatusUpdate{Status: "ACTIVE", BeneficiaryVerificationStatus: "UNSUPPORTED"}
	case "107":
		return store.ExternalAccountStatusUpdate{Status: "ACTIVE", BeneficiaryVerificationStatus: "CHECKED_BY_RECEIVING_FI"}
	}
	u := store.ExternalAccountStatusUpdate{Status: "ACTIVE", BeneficiaryVerificationStatus: "MATCHED"}
	if name := beneficiaryName(info); name != "" {
		u.BeneficiaryVerifiedData, _ = json.Marshal(map[string]string{"fullName": name})
	}
	return u
}

// partialName is the sandbox's "name on file" for a partial match: the
// given name with its middle names cut to initials, or, for a name of one
// or two words, with its first word cut to an initial ("Ana Maria Diaz" ->
// "Ana M. Diaz", "Ana Diaz" -> "A. Diaz").
func partialName(name string) string {
	words := strings.Fields(name)
	initial := func(w string) string {
		r := []rune(w)
		return string(r[0]) + "."
	}
	switch len(words) {
	case 0:
		return ""
	case 1, 2:
		words[0] = initial(words[0])
	default:
		for i := 1; i < len(words)-1; i++ {
			words[i] = initial(words[i])
		}
	}
	return strings.Join(words, " ")
}

func beneficiaryName(info map[string]any) string {
	b, _ := info["beneficiary"].(map[string]any)
	if name, _ := b["fullName"].(string); name != "" {
		return name
	}
	bi, _ := b["businessInfo"].(map[string]any)
	name, _ := bi["legalName"].(string)
	return name
}

// VerifyPending runs the verifier once over up to 100 pending accounts and
// reports how many it decided. Each decision is its own transaction, which
// re-reads the account so a concurrent change (an operator's INACTIVE) wins.
func (s *Service) VerifyPending(ctx context.Context) (int, error) {
	var pending []store.ExternalAccount
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		var err error
		pending, err = tx.PendingExternalAccounts(ctx, 100)
		return err
	})
	if err != nil {
		return 0, err
	}
	done := 0
	for i := range pending {
		if err := s.verifyOne(ctx, pending[i].ID); err != nil {
			return done, err
		}
		done++
	}
	return done, nil
}

// verifyOne decides one PENDING account, with its
// EXTERNAL_ACCOUNT.STATUS_UPDATED, in a transaction of its own that reads
// the account again, so that a concurrent change (an operator's INACTIVE)
// wins; an account no longer PENDING is left as it is.
func (s *Service) verifyOne(ctx context.Context, id string) error {
	return s.store.Tx(ctx, func(tx store.Tx) error {
		a, err := tx.GetExternalAccount(ctx, id)
		if err != nil {
			return err
		}
		if a.Status != "PENDING" || a.BeneficiaryVerificationStatus != "" {
			return nil
		}
		u := s.verifyOutcome(a)
		if err := tx.UpdateExternalAccountStatus(ctx, a.ID, u, s.now()); err != nil || u.Status == a.Status {
			return err
		}
		return s.emitExternalAccount(ctx, tx, a.ID)
	})
}

// emitExternalAccount records EXTERNAL_ACCOUNT.STATUS_UPDATED with the
// account as it is now in tx.
func (s *Service) emitExternalAccount(ctx context.Context, tx store.Tx, id string) error {
	a, err := tx.GetExternalAccount(ctx, id)
	if err != nil {
		return err
	}
	return s.emit(ctx, tx, webhooksig.ExternalAccountStatusUpdated, a.ID, externalAccountJSON(a))
}

// RunWorkers runs the service's background work until ctx ends: the
// external-account verifier every second, the settlement worker every
// quarter second, a daily sweep of idempotency records, and the webhook
// delivery worker (webhookworker.go); it returns once all of them have
// stopped. The binaries start it next to the HTTP server; several
// instances may run it at once.
func (s *Service) RunWorkers(ctx context.Context) {
	// The webhook worker has its own loop (it wakes on commits).
	hooks := make(chan struct{})
	go func() {
		defer close(hooks)
		s.runWebhookWorker(ctx)
	}()
	defer func() { <-hooks }()
	settle := time.NewTicker(250 * time.Millisecond)
	defer settle.Stop()
	verify := time.NewTicker(time.Second)
	defer verify.Stop()
	sweep := time.NewTicker(time.Hour)
	defer sweep.Stop()
	s.runVerifier(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-verify.C:
			s.runVerifier(ctx)
		case <-settle.C:
			if _, err := s.SettleDue(ctx); err != nil && ctx.Err() == nil {
				s.logWorker(ctx, "settlement worker failed", err)
			}
			if _, err := s.SealLedger(ctx); err != nil && ctx.Err() == nil {
				s.logWorker(ctx, "ledger sealer failed", err)
			}
		case <-sweep.C:
			if err := s.sweepIdempotency(ctx); err != nil && ctx.Err() == nil {
				s.logWorker(ctx, "idempotency sweep failed", err)
			}
		}
	}
}

func (s *Service) runVerifier(ctx context.Context) {
	if _, err := s.VerifyPending(ctx); err != nil && ctx.Err() == nil {
		s.logWorker(ctx, "external account verifier failed", err)
	}
}

// The routes of the customers' and the platform's external accounts, one
// operation each (the Platform flag of the requests above set by the
// route's operation, not by its caller).

// CreateCustomerExternalAccount is POST /customers/external-accounts: body
// is any JSON object, which the validator checks.
func (s *Service) CreateCustomerExternalAccount(ctx context.Context, body map[string]any) (wire.ExternalAccount, error) {
	return s.CreateExternalAccount(ctx, ExternalAccountRequest{Body: body})
}

// CreatePlatformExternalAccount is POST /platform/external-accounts.
func (s *Service) CreatePlatformExternalAccount(ctx context.Context, body map[string]any) (wire.ExternalAccount, error) {
	return s.CreateExternalAccount(ctx, ExternalAccountRequest{Platform: true, Body: body})
}

// PlatformExternalAccountFilter is the query of
// ListPlatformExternalAccounts (a customerId is not read there).
type PlatformExternalAccountFilter struct {
	Currency string `query:"currency"` // optional
	Page     PageRequest
}

// ListPlatformExternalAccounts is GET /platform/external-accounts.
func (s *Service) ListPlatformExternalAccounts(ctx context.Context, q PlatformExternalAccountFilter) (wire.List[wire.ExternalAccount], error) {
	return s.ListExternalAccounts(ctx, ExternalAccountFilter{Platform: true, Currency: q.Currency, Page: q.Page})
}

// GetCustomerExternalAccount is GET
// /customers/external-accounts/{externalAccountId}.
func (s *Service) GetCustomerExternalAccount(ctx context.Context, id string) (wire.ExternalAccount, error) {
	return s.GetExternalAccount(ctx, ExternalAccountRef{ID: id})
}

// GetPlatformExternalAccount is GET
// /platform/external-accounts/{externalAccountId}.
func (s *Service) GetPlatformExternalAccount(ctx context.Context, id string) (wire.ExternalAccount, error) {
	return s.GetExternalAccount(ctx, ExternalAccountRef{Platform: true, ID: id})
}

// DeactivateCustomerExternalAccount is DELETE
// /customers/external-accounts/{externalAccountId}.
func (s *Service) DeactivateCustomerExternalAccount(ctx context.Context, id string) error {
	return s.DeactivateExternalAccount(ctx, ExternalAccountRef{ID: id})
}

// DeactivatePlatformExternalAccount is DELETE
// /platform/external-accounts/{externalAccountId}.
func (s *Service) DeactivatePlatformExternalAccount(ctx context.Context, id string) error {
	return s.DeactivateExternalAccount(ctx, ExternalAccountRef{Platform: true, ID: id})
}
