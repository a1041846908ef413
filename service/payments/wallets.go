package payments

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strings"
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

// exportWallet handles POST /internal-accounts/{id}/export with body
// {clientPublicKey} on both legs. The retry, signed by an active session of
// the account, answers 200 with encryptedWalletCredentials: the mnemonic
// HPKE-sealed to clientPublicKey inside a bundle signed by the service's
// signer key (the key clients pin for OTP bundles).
func (s *Service) exportWallet(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	body, err := readBody(r)
	if err != nil {
		return err
	}
	hdr, isRetry, herr := readRetryHeaders(r)
	if herr != nil {
		return herr
	}
	var req wire.ExportRequest
	if err := decodeJSON(r, body, &req, false); err != nil {
		return err
	}
	var client *walletcrypto.PublicKey
	if req.ClientPublicKey == "" {
		return invalidField("clientPublicKey", "required")
	} else if client, err = walletcrypto.ParseClientPublicKey(req.ClientPublicKey); err != nil {
		return invalidField("clientPublicKey", clientKeyRule)
	}
	bodyHash, err := CanonicalBodyHash(body)
	if err != nil {
		return err
	}
	var challenge *store.Challenge
	var bundle, accountID string
	err = s.store.Tx(ctx, func(tx store.Tx) error {
		acct, err := s.embeddedWallet(ctx, tx, r.PathValue("id"))
		if err != nil {
			return err
		}
		accountID = acct.ID
		op := operation{name: opExportWallet, targetID: acct.ID, accountID: acct.ID, bodyHash: bodyHash}
		if !isRetry {
			payload, err := s.activity(acct.ID, "ACTIVITY_TYPE_EXPORT_WALLET",
				map[string]any{"targetPublicKey": req.ClientPublicKey, "walletId": acct.ID})
			if err != nil {
				return err
			}
			challenge, err = s.issueChallenge(ctx, tx, op, payload, nil)
			return err
		}
		if _, err := s.completeRetry(ctx, tx, op, hdr, s.activeKeyOf(ctx, tx, acct.ID)); err != nil {
			return err
		}
		secret, err := s.walletSecret(ctx, tx, acct)
		if err != nil {
			return err
		}
		defer clear(secret)
		bundle, err = walletcrypto.NewExportBundle(s.signer, client, acct.ID, secret)
		return err
	})
	if err != nil {
		return err
	}
	if challenge != nil {
		writeJSON(w, http.StatusAccepted, challengeJSON("", challenge))
		return nil
	}
	writeJSON(w, http.StatusOK, wire.ExportResponse{ID: accountID, EncryptedWalletCredentials: bundle})
	return nil
}

// updateInternalAccount handles PATCH /internal-accounts/{id} (body
// {privateEnabled}): 202, then the same body signed by an active session
// of the account gives 200 with the account.
func (s *Service) updateInternalAccount(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	body, err := readBody(r)
	if err != nil {
		return err
	}
	hdr, isRetry, herr := readRetryHeaders(r)
	if herr != nil {
		return herr
	}
	var req wire.InternalAccountUpdateRequest
	if err := decodeJSON(r, body, &req, false); err != nil {
		return err
	}
	if req.PrivateEnabled == nil {
		return invalidField("privateEnabled", "at least one update field must be provided")
	}
	bodyHash, err := CanonicalBodyHash(body)
	if err != nil {
		return err
	}
	var challenge *store.Challenge
	var updated *store.InternalAccount
	err = s.store.Tx(ctx, func(tx store.Tx) error {
		acct, err := s.embeddedWallet(ctx, tx, r.PathValue("id"))
		if err != nil {
			return err
		}
		op := operation{name: opUpdateAccount, targetID: acct.ID, accountID: acct.ID, bodyHash: bodyHash}
		if !isRetry {
			payload, err := s.activity(acct.ID, "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", map[string]any{
				"encoding":     "PAYLOAD_ENCODING_HEXADECIMAL",
				"hashFunction": "HASH_FUNCTION_NO_OP",
				"payload":      hex.EncodeToString(bodyHash),
				"signWith":     acct.ID,
			})
			if err != nil {
				return err
			}
			challenge, err = s.issueChallenge(ctx, tx, op, payload, nil)
			return err
		}
		if _, err := s.completeRetry(ctx, tx, op, hdr, s.activeKeyOf(ctx, tx, acct.ID)); err != nil {
			return err
		}
		if err := tx.SetPrivateEnabled(ctx, acct.ID, *req.PrivateEnabled, s.now()); err != nil {
			return err
		}
		updated, err = tx.GetInternalAccount(ctx, acct.ID)
		return err
	})
	if err != nil {
		return err
	}
	if challenge != nil {
		writeJSON(w, http.StatusAccepted, challengeJSON("", challenge))
		return nil
	}
	writeJSON(w, http.StatusOK, s.internalAccountJSON(updated))
	return nil
}

// updateCustomer handles PATCH /customers/{id}. A change of e-mail for a
// customer whose wallet signs in with EMAIL_OTP is a signed retry (the
// e-mail is a credential): the challenge binds the body and the set of
// tied EMAIL_OTP credentials, the retry must be signed by an active session
// of the wallet, and the credential's nickname changes in the same
// transaction. Anything else applies at once (200).
func (s *Service) updateCustomer(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	body, err := readBody(r)
	if err != nil {
		return err
	}
	hdr, isRetry, herr := readRetryHeaders(r)
	if herr != nil {
		return herr
	}
	var req wire.CustomerUpdateRequest
	if err := decodeJSON(r, body, &req, false); err != nil {
		return err
	}
	if err := checkCustomerUpdate(&req); err != nil {
		return err
	}
	bodyHash, err := CanonicalBodyHash(body)
	if err != nil {
		return err
	}
	notFound := errorf(CodeUserNotFound, "no customer with this id")
	id := r.PathValue("customerId")
	if !ids.Valid("Customer", id) {
		return notFound
	}
	var challenge *store.Challenge
	var updated *store.Customer
	err = s.store.Tx(ctx, func(tx store.Tx) error {
		c, err := tx.GetCustomer(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return notFound
		}
		if err != nil {
			return err
		}
		if req.CustomerType != c.CustomerType {
			return invalidField("customerType", "must be "+c.CustomerType+", the customer's type (it cannot change)")
		}
		emailChanges := req.Email != nil && !strings.EqualFold(*req.Email, c.Email)
		var tied []store.Credential
		if emailChanges {
			if tied, err = tiedEmailCredentials(ctx, tx, c.ID); err != nil {
				return err
			}
		}
		if len(tied) > 0 {
			accountID := tied[0].AccountID
			set := credentialSet(tied)
			op := operation{name: opUpdateCustomer, targetID: c.ID, accountID: accountID, bodyHash: bodyHash}
			if !isRetry {
				payload, err := s.activity(accountID, "ACTIVITY_TYPE_UPDATE_USER_EMAIL",
					map[string]any{"authenticatorIds": set, "userEmail": *req.Email, "userId": accountID})
				if err != nil {
					return err
				}
				challenge, err = s.issueChallenge(ctx, tx, op, payload, nil)
				return err
			}
			if err := sameCredentialSet(ctx, tx, hdr.RequestID, set); err != nil {
				return err
			}
			if _, err := s.completeRetry(ctx, tx, op, hdr, s.activeKeyOf(ctx, tx, accountID)); err != nil {
				return err
			}
			for i := range tied {
				err := tx.SetCredentialNickname(ctx, tied[i].ID, *req.Email, s.now())
				if errors.Is(err, store.ErrConflict) {
					return errorf(CodeEmailAlreadyExists, "this e-mail address already signs in to another wallet")
				}
				if err != nil {
					return err
				}
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
		c.UpdatedAt = s.now()
		if err := tx.UpdateCustomer(ctx, c); err != nil {
			return err
		}
		updated = c
		return nil
	})
	if err != nil {
		return err
	}
	if challenge != nil {
		writeJSON(w, http.StatusAccepted, challengeJSON(wire.TypeEmailOTP, challenge))
		return nil
	}
	writeJSON(w, http.StatusOK, customerJSON(updated))
	return nil
}

// checkCustomerUpdate names every bad field of a PATCH body.
func checkCustomerUpdate(req *wire.CustomerUpdateRequest) error {
	var fe fieldErrors
	switch req.CustomerType {
	case "INDIVIDUAL", "BUSINESS":
	case "":
		fe.add("customerType", "required")
	default:
		fe.addConstraint("customerType", "must be INDIVIDUAL or BUSINESS", wire.FieldConstraint{Enum: []string{"INDIVIDUAL", "BUSINESS"}})
	}
	if req.Email != nil && !validEmail(*req.Email) {
		fe.addConstraint("email", "must be an e-mail address such as name@example.com", wire.FieldConstraint{Format: "email"})
	}
	if req.FullName != nil && utf8.RuneCountInString(*req.FullName) > 255 {
		fe.addConstraint("fullName", "at most 255 characters", wire.FieldConstraint{MaxLength: new(255)})
	}
	if req.UmaAddress != nil && !validUMA(*req.UmaAddress) {
		fe.addConstraint("umaAddress", "must look like $name@domain", wire.FieldConstraint{Pattern: umaPattern})
	}
	if req.Email == nil && req.FullName == nil && req.UmaAddress == nil && len(fe) == 0 {
		fe.add("email", "at least one of email, fullName and umaAddress must be provided")
	}
	if e := fe.err(); e != nil {
		return e
	}
	return nil
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
