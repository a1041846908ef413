package payments

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
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

// discoveries handles GET /discoveries?country=&currency=.
func (s *Service) discoveries(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	country, currency := q.Get("country"), q.Get("currency")
	var fe fieldErrors
	if country != "" && !upperLetters(country, 2) {
		fe.addConstraint("country", "must be a two-letter country code such as PH", wire.FieldConstraint{Pattern: "^[A-Z]{2}$"})
	}
	if currency != "" && !upperLetters(currency, 3) {
		fe.addConstraint("currency", "must be a three-letter currency code such as PHP", wire.FieldConstraint{Pattern: "^[A-Z]{3}$"})
	}
	if e := fe.err(); e != nil {
		return e
	}
	writeJSON(w, http.StatusOK, wire.Data[banks.Bank]{Data: banks.List(country, currency)})
	return nil
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

// createCustomerExternalAccount handles POST /customers/external-accounts;
// without customerId the account belongs to the platform (facts §3.2).
func (s *Service) createCustomerExternalAccount(w http.ResponseWriter, r *http.Request) error {
	return s.createExternalAccount(w, r, false)
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

// createPlatformExternalAccount handles POST /platform/external-accounts.
func (s *Service) createPlatformExternalAccount(w http.ResponseWriter, r *http.Request) error {
	return s.createExternalAccount(w, r, true)
}

func (s *Service) createExternalAccount(w http.ResponseWriter, r *http.Request, platform bool) error {
	ctx := r.Context()
	raw, err := readBody(r)
	if err != nil {
		return err
	}
	var body map[string]any
	if err := decodeJSON(r, raw, &body, false); err != nil {
		return err
	}
	if body == nil {
		return errorf(CodeInvalidRequestFormat, "the body must be a JSON object")
	}
	fe := fieldErrors(accountrules.ValidateCreate(body))
	customerID, _ := body["customerId"].(string)
	if platform && customerID != "" {
		fe.add("customerId", "platform accounts have no customer; use POST /customers/external-accounts")
	}
	if e := fe.err(); e != nil {
		return e
	}
	info := body["accountInfo"].(map[string]any)
	accountType := info["accountType"].(string)
	currency := body["currency"].(string)

	if s.mode == ModeSandbox && strings.HasSuffix(accountrules.PrimaryIdentifier(info), "105") {
		e := errorf("INVALID_BANK_ACCOUNT", "the receiving institution reports this account as invalid (sandbox pattern 105)")
		e.Details = map[string]any{"errors": []wire.FieldError{{Field: "accountInfo", Message: "account is invalid"}}}
		return e
	}

	canonical, err := json.Marshal(info) // sorted keys, no whitespace
	if err != nil {
		return err
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
	a.Fingerprint, err = fingerprint(customerID, currency, info)
	if err != nil {
		return err
	}

	err = s.store.Tx(ctx, func(tx store.Tx) error {
		if customerID != "" {
			if _, err := tx.GetCustomer(ctx, customerID); errors.Is(err, store.ErrNotFound) {
				return invalidField("customerId", "no customer with this id")
			} else if err != nil {
				return err
			}
		}
		err := tx.CreateExternalAccount(ctx, &a)
		if errors.Is(err, store.ErrConflict) {
			return errorf(CodeConflict, "this external account already exists for this owner")
		}
		if err != nil {
			return err
		}
		return s.emit(ctx, tx, webhooksig.ExternalAccountStatusUpdated, a.ID, externalAccountJSON(&a))
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, externalAccountJSON(&a))
	return nil
}

// listCustomerExternalAccounts handles GET /customers/external-accounts.
// customerId is required: the platform's own accounts are listed at
// /platform/external-accounts.
func (s *Service) listCustomerExternalAccounts(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var fe fieldErrors
	f := store.ExternalAccountFilter{CustomerID: q.Get("customerId"), Currency: q.Get("currency")}
	switch {
	case f.CustomerID == "":
		fe.add("customerId", "required")
	case !ids.Valid("Customer", f.CustomerID):
		fe.add("customerId", "must be a Customer:<uuid> id")
	}
	return s.listExternalAccounts(w, r, f, fe)
}

// listPlatformExternalAccounts handles GET /platform/external-accounts.
func (s *Service) listPlatformExternalAccounts(w http.ResponseWriter, r *http.Request) error {
	f := store.ExternalAccountFilter{Platform: true, Currency: r.URL.Query().Get("currency")}
	return s.listExternalAccounts(w, r, f, nil)
}

func (s *Service) listExternalAccounts(w http.ResponseWriter, r *http.Request, f store.ExternalAccountFilter, fe fieldErrors) error {
	f.Limit, f.Cursor = pageParams(r.URL.Query(), "ExternalAccount", &fe)
	if f.Currency != "" && !currencyCode(f.Currency) {
		fe.addConstraint("currency", "must be a currency code such as USD or BTC", wire.FieldConstraint{Pattern: "^[A-Z]{3,4}$"})
	}
	if e := fe.err(); e != nil {
		return e
	}
	var page store.Page[store.ExternalAccount]
	err := s.store.Tx(r.Context(), func(tx store.Tx) error {
		var err error
		page, err = tx.ListExternalAccounts(r.Context(), f)
		return err
	})
	if err != nil {
		return err
	}
	out := wire.List[wire.ExternalAccount]{Data: make([]wire.ExternalAccount, 0, len(page.Items)), HasMore: page.HasMore, NextCursor: page.NextCursor, TotalCount: &page.TotalCount}
	for i := range page.Items {
		out.Data = append(out.Data, externalAccountJSON(&page.Items[i]))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getExternalAccount handles GET /customers/external-accounts/{externalAccountId}.
func (s *Service) getExternalAccount(w http.ResponseWriter, r *http.Request) error {
	a, err := s.loadExternalAccount(r.Context(), r.PathValue("externalAccountId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, externalAccountJSON(a))
	return nil
}

// deactivateExternalAccount handles DELETE
// /customers/external-accounts/{externalAccountId}: the platform disables
// the account (status INACTIVE); it stays readable so transactions that
// name it keep their reference. Answers 204.
func (s *Service) deactivateExternalAccount(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := r.PathValue("externalAccountId")
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		a, err := loadExternalAccount(ctx, tx, id)
		if err != nil {
			return err
		}
		err = tx.UpdateExternalAccountStatus(ctx, a.ID, store.ExternalAccountStatusUpdate{
			Status:                        "INACTIVE",
			BeneficiaryVerificationStatus: a.BeneficiaryVerificationStatus,
			BeneficiaryVerifiedData:       a.BeneficiaryVerifiedData,
		}, s.now())
		if err != nil || a.Status == "INACTIVE" {
			return err
		}
		return s.emitExternalAccount(ctx, tx, a.ID)
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Service) loadExternalAccount(ctx context.Context, id string) (*store.ExternalAccount, error) {
	var a *store.ExternalAccount
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		var err error
		a, err = loadExternalAccount(ctx, tx, id)
		return err
	})
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
// paymentRails, which the service chooses (facts §3.2).
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

// paymentRails are the rails an account type pays out on (facts §6).
func paymentRails(accountType string, info map[string]any) []string {
	switch accountType {
	case "USD_ACCOUNT":
		return []string{"ACH", "WIRE", "RTP", "FEDNOW"}
	case "MXN_ACCOUNT":
		return []string{"SPEI"}
	case "BRL_ACCOUNT":
		return []string{"PIX"}
	case "EUR_ACCOUNT":
		return []string{"SEPA", "SEPA_INSTANT"}
	case "GBP_ACCOUNT":
		return []string{"FASTER_PAYMENTS"}
	case "INR_ACCOUNT":
		return []string{"UPI"}
	case "COP_ACCOUNT", "SLV_ACCOUNT":
		if _, mobile := info["phoneNumber"]; mobile {
			return []string{"MOBILE_MONEY"}
		}
		return []string{"BANK_TRANSFER"}
	case "KES_ACCOUNT", "TZS_ACCOUNT", "ZMW_ACCOUNT", "RWF_ACCOUNT", "MWK_ACCOUNT", "UGX_ACCOUNT", "XOF_ACCOUNT":
		return []string{"MOBILE_MONEY"}
	case "SPARK_WALLET":
		return []string{}
	}
	return []string{"BANK_TRANSFER"} // PHP, NGN, ZAR, CAD, AED
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
		err := s.store.Tx(ctx, func(tx store.Tx) error {
			a, err := tx.GetExternalAccount(ctx, pending[i].ID)
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
		if err != nil {
			return done, err
		}
		done++
	}
	return done, nil
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
// quarter second, and a daily sweep of idempotency records. The binaries
// start it next to the HTTP server; several instances may run it at once.
func (s *Service) RunWorkers(ctx context.Context) {
	go s.runWebhookWorker(ctx)
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
				s.log.Error("settlement worker failed", "err", err)
			}
		case <-sweep.C:
			if err := s.sweepIdempotency(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("idempotency sweep failed", "err", err)
			}
		}
	}
}

func (s *Service) runVerifier(ctx context.Context) {
	if _, err := s.VerifyPending(ctx); err != nil && ctx.Err() == nil {
		s.log.Error("external account verifier failed", "err", err)
	}
}

// idempotencyTTL is how long a stored Idempotency-Key answer is replayed.
const idempotencyTTL = 24 * time.Hour

func (s *Service) sweepIdempotency(ctx context.Context) error {
	return s.store.Tx(ctx, func(tx store.Tx) error {
		_, err := tx.DeleteIdempotencyRecords(ctx, s.now().Add(-idempotencyTTL))
		return err
	})
}

// legacyExternalAccountRoutes are this area's handlers that are not yet operations (see
// LegacyRoutes).
func (s *Service) legacyExternalAccountRoutes() map[string]LegacyHandler {
	return map[string]LegacyHandler{
		"GET /discoveries":                                        s.discoveries,
		"POST /customers/external-accounts":                       s.createCustomerExternalAccount,
		"GET /customers/external-accounts":                        s.listCustomerExternalAccounts,
		"GET /customers/external-accounts/{externalAccountId}":    s.getExternalAccount,
		"DELETE /customers/external-accounts/{externalAccountId}": s.deactivateExternalAccount,
		"POST /platform/external-accounts":                        s.createPlatformExternalAccount,
		"GET /platform/external-accounts":                         s.listPlatformExternalAccounts,
	}
}
