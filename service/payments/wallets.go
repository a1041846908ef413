package payments

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"paywallet/service/bip39"
	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

// Signed-retry operations on wallets and customers (grid-api-facts §3.4,
// §3.5).
const (
	opExportWallet   = "internal-accounts.export"
	opUpdateAccount  = "internal-accounts.update"
	opUpdateCustomer = "customers.update"
)

// newWalletSecret makes an embedded wallet's BIP-39 mnemonic, sealed at
// rest and bound to the account id.
func (s *Service) newWalletSecret(accountID string) ([]byte, error) {
	m, err := bip39.NewMnemonic()
	if err != nil {
		return nil, err
	}
	return s.box.Seal([]byte(m), walletSecretLabel(accountID)), nil
}

func walletSecretLabel(accountID string) string { return accountID + "/wallet-secret" }

// walletSecret returns the account's mnemonic, making one for an account
// created before wallets had secrets. Concurrent first exports agree on one
// secret: the store keeps the first and the loser reads it back.
func (s *Service) walletSecret(ctx context.Context, tx store.Tx, acct *store.InternalAccount) ([]byte, error) {
	if len(acct.WalletSecret) == 0 {
		sealed, err := s.newWalletSecret(acct.ID)
		if err != nil {
			return nil, err
		}
		if _, err := tx.SetWalletSecret(ctx, acct.ID, sealed); err != nil {
			return nil, err
		}
		if acct, err = tx.GetInternalAccount(ctx, acct.ID); err != nil {
			return nil, err
		}
	}
	return s.box.Open(acct.WalletSecret, walletSecretLabel(acct.ID))
}

// embeddedWallet loads the internal account in the path, which must be an
// EMBEDDED_WALLET; any other id is 404.
func (s *Service) embeddedWallet(ctx context.Context, tx store.Tx, id string) (*store.InternalAccount, error) {
	a, err := s.walletAccount(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if a.Type != "EMBEDDED_WALLET" {
		return nil, errorf(CodeInvalidInput, "only EMBEDDED_WALLET accounts have this operation")
	}
	return a, nil
}

// walletOperation is the shape of the signed operations on an embedded
// wallet (PATCH /internal-accounts/{id}, POST /internal-accounts/{id}/export).
// The account id must be an EMBEDDED_WALLET's. The first call answers the
// challenge of the activity that activityOf names for the account, bound
// to the request body, held for the person's confirmation when need (if
// not nil) says the action needs one (stepup.go); the retry, signed by an
// active session of the account, runs effect in the transaction that
// consumes the challenge.
func walletOperation[T any](ctx context.Context, s *Service, id, name string, call SignedCall,
	activityOf func(*store.InternalAccount) (string, map[string]any),
	need func(store.Tx, *store.InternalAccount) (*stepUpNeed, error),
	effect func(store.Tx, *store.InternalAccount) (T, error)) (Signed[T], error) {
	return commit(ctx, s, "", nil, func(tx store.Tx) (Signed[T], error) {
		acct, err := s.embeddedWallet(ctx, tx, id)
		if err != nil {
			return Signed[T]{}, err
		}
		op := operation{name: name, targetID: acct.ID, accountID: acct.ID, bodyHash: call.BodyHash}
		if !call.IsRetry() {
			if need != nil {
				if op.stepUp, err = need(tx, acct); err != nil {
					return Signed[T]{}, err
				}
			}
			typ, params := activityOf(acct)
			c, err := s.activityChallenge(ctx, tx, op, "", typ, params, nil)
			if err != nil {
				return Signed[T]{}, err
			}
			return challenged[T](c), nil
		}
		c, err := s.completeRetry(ctx, tx, op, call, s.activeKeyOf(ctx, tx, acct.ID))
		if err != nil {
			return Signed[T]{}, err
		}
		if need != nil {
			// What needs a confirmation is decided again now: the
			// action may need one that it did not need when its
			// challenge was made (limits tightened meanwhile make the
			// same change a loosening).
			if err := s.confirmedIfNeeded(ctx, tx, c, func() (*stepUpNeed, error) { return need(tx, acct) }); err != nil {
				return Signed[T]{}, err
			}
		}
		v, err := effect(tx, acct)
		if err != nil {
			return Signed[T]{}, err
		}
		return done(v), nil
	})
}

// ExportWallet exports an embedded wallet's secret (POST
// /internal-accounts/{id}/export, body {clientPublicKey} on both legs). The
// retry, signed by an active session of the account, answers
// encryptedWalletCredentials: the mnemonic HPKE-sealed to clientPublicKey
// inside a bundle signed by the service's signer key (the key clients pin
// for OTP bundles). The export is a RECOVERY_PHRASE_EXPORTED record of the
// customer's security log.
func (s *Service) ExportWallet(ctx context.Context, id string, req wire.ExportRequest, call SignedCall, user EndUser) (Signed[wire.ExportResponse], error) {
	if req.ClientPublicKey == "" {
		return Signed[wire.ExportResponse]{}, invalidField("clientPublicKey", "required")
	}
	client, err := walletcrypto.ParseClientPublicKey(req.ClientPublicKey)
	if err != nil {
		return Signed[wire.ExportResponse]{}, invalidField("clientPublicKey", clientKeyRule)
	}
	return walletOperation(ctx, s, id, opExportWallet, call,
		func(acct *store.InternalAccount) (string, map[string]any) {
			return "ACTIVITY_TYPE_EXPORT_WALLET", map[string]any{"targetPublicKey": req.ClientPublicKey, "walletId": acct.ID}
		},
		func(tx store.Tx, acct *store.InternalAccount) (*stepUpNeed, error) {
			// Showing the recovery phrase may need the person's
			// confirmation.
			return s.actionNeed(ctx, tx, ActionRecoveryPhraseExport, acct.ID)
		},
		func(tx store.Tx, acct *store.InternalAccount) (wire.ExportResponse, error) {
			secret, err := s.walletSecret(ctx, tx, acct)
			if err != nil {
				return wire.ExportResponse{}, err
			}
			defer clear(secret)
			bundle, err := walletcrypto.NewExportBundle(s.signer, client, acct.ID, secret)
			if err != nil {
				return wire.ExportResponse{}, err
			}
			if err := s.recordSecurity(ctx, tx, securityRecord{accountID: acct.ID, typ: SecurityRecoveryPhraseExported,
				details: map[string]any{}, user: &user}); err != nil {
				return wire.ExportResponse{}, err
			}
			return wire.ExportResponse{ID: acct.ID, EncryptedWalletCredentials: bundle}, nil
		})
}

// UpdateInternalAccount changes an embedded wallet's settings (PATCH
// /internal-accounts/{id}, body {privateEnabled}): the first call answers
// a challenge, the same body signed by an active session of the account
// applies it and answers the account.
func (s *Service) UpdateInternalAccount(ctx context.Context, id string, req wire.InternalAccountUpdateRequest, call SignedCall) (Signed[wire.InternalAccount], error) {
	if req.PrivateEnabled == nil {
		return Signed[wire.InternalAccount]{}, invalidField("privateEnabled", "at least one update field must be provided")
	}
	return walletOperation(ctx, s, id, opUpdateAccount, call,
		func(acct *store.InternalAccount) (string, map[string]any) {
			return "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", map[string]any{
				"encoding":     "PAYLOAD_ENCODING_HEXADECIMAL",
				"hashFunction": "HASH_FUNCTION_NO_OP",
				"payload":      hex.EncodeToString(call.BodyHash),
				"signWith":     acct.ID,
			}
		},
		nil,
		func(tx store.Tx, acct *store.InternalAccount) (wire.InternalAccount, error) {
			if err := tx.SetPrivateEnabled(ctx, acct.ID, *req.PrivateEnabled, s.now()); err != nil {
				return wire.InternalAccount{}, err
			}
			updated, err := tx.GetInternalAccount(ctx, acct.ID)
			if err != nil {
				return wire.InternalAccount{}, err
			}
			return s.internalAccountJSON(updated), nil
		})
}

// UpdateCustomer changes a customer (PATCH /customers/{customerId}): the
// fields the body names, each checked as on creation; fields of the other
// customer type, region, kycStatus and kybStatus are refused, and
// businessInfo changes the business fields it names. customerType may be
// left out (it is the customer's own) but cannot change. A deleted customer
// cannot be changed (410 CUSTOMER_DELETED). A change of e-mail for a
// customer whose wallet signs in with EMAIL_OTP is a
// signed retry (the e-mail is a credential): the challenge binds the body
// and the set of tied EMAIL_OTP credentials, the retry must be signed by an
// active session of the wallet, and the credential's nickname changes in
// the same transaction. Anything else applies at once. A changed e-mail is
// an EMAIL_CHANGED record of the customer's security log, and the old
// address gets the "sign-in methods changed" e-mail.
func (s *Service) UpdateCustomer(ctx context.Context, id string, req wire.CustomerUpdateRequest, call SignedCall, user EndUser) (Signed[wire.Customer], error) {
	now := s.now()
	if req.CustomerType == "" {
		// The reference's update schema requires customerType, but its
		// own command-line client never sends it. A type cannot change,
		// so an absent one means the customer's own.
		c, err := read(ctx, s, func(tx store.Tx) (*store.Customer, error) { return loadCustomer(ctx, tx, id) })
		if err != nil {
			return Signed[wire.Customer]{}, err
		}
		req.CustomerType = c.CustomerType
	}
	if fe := s.checkCustomerUpdate(&req, now); len(fe) > 0 {
		// A body refused on its own may also try to change the type:
		// name that too, in the same answer.
		if stored, err := read(ctx, s, func(tx store.Tx) (*store.Customer, error) { return loadCustomer(ctx, tx, id) }); err == nil &&
			slices.Contains(customerTypes, req.CustomerType) && req.CustomerType != stored.CustomerType {
			fe.add("customerType", "must be "+stored.CustomerType+", the customer's type (it cannot change)")
		}
		return Signed[wire.Customer]{}, fe.termsErr()
	}
	var notice *securityNotice
	out, err := commit(ctx, s, "", nil, func(tx store.Tx) (Signed[wire.Customer], error) {
		notice = nil
		c, err := loadCustomer(ctx, tx, id)
		if err != nil {
			return Signed[wire.Customer]{}, err
		}
		if !c.DeletedAt.IsZero() {
			return Signed[wire.Customer]{}, errCustomerDeleted(c.ID)
		}
		if req.CustomerType != c.CustomerType {
			return Signed[wire.Customer]{}, invalidField("customerType", "must be "+c.CustomerType+", the customer's type (it cannot change)")
		}
		profile, err := s.mergeCustomerUpdate(c, &req, now)
		if err != nil {
			return Signed[wire.Customer]{}, err
		}
		if req.UmaAddress != nil && *req.UmaAddress != c.UmaAddress {
			if err := umaTaken(ctx, tx, *req.UmaAddress, c.ID); err != nil {
				return Signed[wire.Customer]{}, err
			}
		}
		if req.Email != nil && !strings.EqualFold(*req.Email, c.Email) {
			challenge, err := s.changeTiedEmail(ctx, tx, c.ID, *req.Email, call)
			if err != nil {
				return Signed[wire.Customer]{}, err
			}
			if challenge != nil {
				return challenged[wire.Customer](challenge), nil
			}
			if notice, err = s.recordEmailChange(ctx, tx, c, *req.Email, user); err != nil {
				return Signed[wire.Customer]{}, err
			}
		}
		if req.Email != nil {
			c.Email = *req.Email
		}
		if req.FullName != nil {
			c.FullName = *req.FullName
		}
		if req.UmaAddress != nil {
			c.UmaAddress = *req.UmaAddress
		}
		if c.Profile, err = encodeProfile(profile); err != nil {
			return Signed[wire.Customer]{}, err
		}
		if req.Identifier != "" {
			c.Identifier = s.box.Seal([]byte(req.Identifier), identifierLabel(c.ID))
		}
		c.UpdatedAt = now
		if err := tx.UpdateCustomer(ctx, c); err != nil {
			return Signed[wire.Customer]{}, err
		}
		return done(customerJSON(c)), nil
	})
	if err == nil {
		s.send(ctx, notice)
	}
	return out, err
}

// recordEmailChange records the change of c's e-mail to email (masked),
// naming the wallet whose EMAIL_OTP credential it renames if any, and
// makes the e-mail to the old address.
func (s *Service) recordEmailChange(ctx context.Context, tx store.Tx, c *store.Customer, email string, user EndUser) (*securityNotice, error) {
	details := map[string]any{"to": maskEmail(email)}
	if c.Email != "" {
		details["from"] = maskEmail(c.Email)
	}
	accountID := ""
	tied, err := tiedEmailCredentials(ctx, tx, c.ID)
	if err != nil {
		return nil, err
	}
	if len(tied) > 0 {
		accountID = tied[0].AccountID
	}
	if err := s.recordSecurity(ctx, tx, securityRecord{customerID: c.ID, accountID: accountID, typ: SecurityEmailChanged,
		details: details, user: &user}); err != nil {
		return nil, err
	}
	if c.Email == "" {
		return nil, nil
	}
	return s.newNotice(ctx, tx, c.ID, c.Email, noticeMethodsChanged,
		"The e-mail address of your wallet was changed from this address to "+maskEmail(email)+" at "+
			s.now().UTC().Format("2 Jan 2006 15:04 UTC")+".")
}

// mergeCustomerUpdate is the customer's stored fields with the update's
// applied, checked against the rules between fields (an "other"
// description needs OTHER, an identifier needs its idType).
func (s *Service) mergeCustomerUpdate(c *store.Customer, req *wire.CustomerUpdateRequest, now time.Time) (*customerProfile, error) {
	p := decodeProfile(c.Profile)
	if req.Currencies != nil {
		p.Currencies = req.Currencies
	}
	if req.PhoneNumber != nil {
		p.PhoneNumber = *req.PhoneNumber
	}
	if req.EndUserTermsConsent != nil {
		p.EndUserTermsConsent = req.EndUserTermsConsent
	}
	if req.Address != nil {
		p.Address = req.Address
	}
	var fe fieldErrors
	check := fieldChecker{fe: &fe, now: now, s: s}
	switch c.CustomerType {
	case "INDIVIDUAL":
		mergeIndividual(&p.IndividualFields, &req.IndividualFields)
		check.individualCross(&p.IndividualFields, req.Identifier)
	case "BUSINESS":
		if req.BusinessInfo != nil {
			if p.BusinessInfo == nil {
				p.BusinessInfo = &wire.BusinessInfo{}
			}
			mergeBusiness(p.BusinessInfo, req.BusinessInfo)
		}
		if p.BusinessInfo != nil {
			check.businessCross(p.BusinessInfo)
		}
	}
	if e := fe.err(); e != nil {
		return nil, e
	}
	return &p, nil
}

// changeTiedEmail is the signed part of UpdateCustomer's change of the
// customer's e-mail to email: nothing when no EMAIL_OTP credential is tied
// to it; else, on the first call, the challenge to sign, and on the retry
// the tied credentials renamed to email.
func (s *Service) changeTiedEmail(ctx context.Context, tx store.Tx, customerID, email string, call SignedCall) (*wire.SignedRequestChallenge, error) {
	tied, err := tiedEmailCredentials(ctx, tx, customerID)
	if err != nil || len(tied) == 0 {
		return nil, err
	}
	accountID := tied[0].AccountID
	set := credentialSet(tied)
	op := operation{name: opUpdateCustomer, targetID: customerID, accountID: accountID, bodyHash: call.BodyHash}
	if !call.IsRetry() {
		if op.stepUp, err = s.actionNeed(ctx, tx, ActionEmailChange, accountID); err != nil {
			return nil, err
		}
		return s.activityChallenge(ctx, tx, op, wire.TypeEmailOTP, "ACTIVITY_TYPE_UPDATE_USER_EMAIL",
			map[string]any{"authenticatorIds": set, "userEmail": email, "userId": accountID}, nil)
	}
	if err := sameCredentialSet(ctx, tx, call.RequestID, set); err != nil {
		return nil, err
	}
	if _, err := s.completeRetry(ctx, tx, op, call, s.activeKeyOf(ctx, tx, accountID)); err != nil {
		return nil, err
	}
	for i := range tied {
		err := tx.SetCredentialNickname(ctx, tied[i].ID, email, s.now())
		if errors.Is(err, store.ErrConflict) {
			return nil, errorf(CodeEmailAlreadyExists, "this e-mail address already signs in to another wallet")
		}
		if err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// checkCustomerUpdate names every bad field of a PATCH body, each on its
// own (the rules between fields wait for the stored customer).
func (s *Service) checkCustomerUpdate(req *wire.CustomerUpdateRequest, now time.Time) fieldErrors {
	var fe fieldErrors
	check := fieldChecker{fe: &fe, now: now, s: s}
	checkCustomerType(req.CustomerType, true, &fe)
	if req.Email != nil && !validEmail(*req.Email) {
		fe.addConstraint("email", "must be an e-mail address such as name@example.com", wire.FieldConstraint{Format: "email"})
	}
	if req.FullName != nil && utf8.RuneCountInString(*req.FullName) > 255 {
		fe.addConstraint("fullName", "at most 255 characters", wire.FieldConstraint{MaxLength: new(255)})
	}
	if req.UmaAddress != nil && !validUMA(*req.UmaAddress) {
		fe.addConstraint("umaAddress", "must look like $name@domain", wire.FieldConstraint{Pattern: umaPattern})
	}
	common := wire.CustomerCommon{Currencies: req.Currencies, EndUserTermsConsent: req.EndUserTermsConsent, Address: req.Address}
	if req.PhoneNumber != nil {
		common.PhoneNumber = *req.PhoneNumber
		if common.PhoneNumber == "" {
			fe.addConstraint("phoneNumber", "must be an E.164 number such as +14155551234", wire.FieldConstraint{Pattern: phonePattern})
		}
	}
	check.common(&common, false)
	check.readOnlyStatuses(req.KYCStatus, req.KYBStatus)
	fullName := ""
	if req.FullName != nil {
		fullName = *req.FullName
		if fullName == "" && req.CustomerType == "BUSINESS" {
			fullName = " " // present: refused for a business all the same
		}
	}
	check.otherType(req.CustomerType, &req.IndividualFields, req.Identifier, fullName, req.BusinessInfo)
	switch req.CustomerType {
	case "INDIVIDUAL":
		check.individual(&req.IndividualFields)
	case "BUSINESS":
		if req.BusinessInfo != nil {
			check.business(req.BusinessInfo, false)
		}
	}
	changes := req.Email != nil || req.FullName != nil || req.UmaAddress != nil || req.Currencies != nil ||
		req.PhoneNumber != nil || req.EndUserTermsConsent != nil || req.Address != nil || req.Identifier != "" ||
		req.BusinessInfo != nil || len(setMembers(&req.IndividualFields)) > 0
	if !changes && len(fe) == 0 {
		fe.add("email", "at least one field to change must be provided (email, fullName, umaAddress, phoneNumber, currencies, address, …)")
	}
	return fe
}

// tiedEmailCredentials are the EMAIL_OTP credentials of the customer's
// embedded wallets: the credentials whose nickname is the customer's e-mail.
func tiedEmailCredentials(ctx context.Context, tx store.Tx, customerID string) ([]store.Credential, error) {
	var out []store.Credential
	cursor := ""
	for {
		page, err := tx.ListInternalAccounts(ctx, store.InternalAccountFilter{CustomerID: customerID, Type: "EMBEDDED_WALLET", Limit: 100, Cursor: cursor})
		if err != nil {
			return nil, err
		}
		for i := range page.Items {
			creds, err := tx.ListCredentials(ctx, page.Items[i].ID)
			if err != nil {
				return nil, err
			}
			for _, c := range creds {
				if c.Type == wire.TypeEmailOTP {
					out = append(out, c)
				}
			}
		}
		if !page.HasMore {
			return out, nil
		}
		cursor = page.NextCursor
	}
}

// credentialSet is the sorted ids of the tied credentials, as the
// challenge's payload carries them.
func credentialSet(creds []store.Credential) []string {
	set := make([]string, 0, len(creds))
	for i := range creds {
		set = append(set, creds[i].ID)
	}
	sort.Strings(set)
	return set
}

// sameCredentialSet answers 409 EMAIL_OTP_CREDENTIAL_SET_CHANGED when the
// tied credentials are no longer those the challenge was issued for. An
// unknown request id is left to completeRetry, which answers its 401.
func sameCredentialSet(ctx context.Context, tx store.Tx, requestID string, set []string) error {
	if !ids.Valid("Request", requestID) {
		return nil
	}
	ch, err := tx.GetChallenge(ctx, requestID)
	if err != nil || ch.Operation != opUpdateCustomer {
		return nil
	}
	var p struct {
		Parameters struct {
			AuthenticatorIDs []string `json:"authenticatorIds"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal([]byte(ch.Payload), &p); err != nil {
		return err
	}
	if strings.Join(p.Parameters.AuthenticatorIDs, ",") != strings.Join(set, ",") {
		return errorf("EMAIL_OTP_CREDENTIAL_SET_CHANGED", "the wallet's e-mail credentials changed since the challenge; start again")
	}
	return nil
}
