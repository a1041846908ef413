package payments

import (
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"

	"paywallet/service/ids"
	"paywallet/service/rates"
	"paywallet/service/store"
	"paywallet/shared/wire"
)

// Receiver lookup of an external account (GET
// /receiver/external-account/{accountId}): before a quote, what a sender
// can pay the account in, at what estimated rate, between what amounts.
//
// What applies here: the sender is one of the platform's customers, and a
// quote pays only the source customer's own accounts, so the sender is the
// account's customer: customerId may name it (it must, then, be the
// account's), and without it the account's own customer is the sender. The
// account is paid in its one currency, on its first payment rail. What does
// not: a sender other than a customer (there is no UMA network behind this
// service; senderUmaAddress, when given, must be the sender's umaAddress),
// requiredPayerDataFields (quotes here take no payer data; the service
// already holds its customers'), and the 412/424 answers about a
// counterparty VASP.
//
// The lookupId binds the customer and the account: it is an HMAC of both
// under a key derived from the at-rest key, so it needs no storage, is the
// same for every lookup of the pair, and a quote that carries it is checked
// against its own source customer and destination (LOOKUP_REQUEST_NOT_FOUND
// otherwise).

// ReceiverLookupRequest is the request of LookupExternalAccount.
type ReceiverLookupRequest struct {
	AccountID        string `path:"accountId"`         // the path's accountId
	CustomerID       string `query:"customerId"`       // the sender; optional: the account's customer
	SenderUmaAddress string `query:"senderUmaAddress"` // optional; must be the sender's umaAddress
}

// errLookupNotFound is a lookupId no lookup of the quote's customer and
// destination answered.
var errLookupNotFound = errorf("LOOKUP_REQUEST_NOT_FOUND", "no receiver lookup of this quote's customer and destination has this lookupId")

const lookupKeyInfo = "paywallet/receiver-lookup-id/v1"

// lookupID is the lookupId of a lookup of accountID by customerID: a
// version 8 UUID made of an HMAC-SHA-256 of both.
func (s *Service) lookupID(customerID, accountID string) (string, error) {
	key, err := hkdf.Key(sha256.New, s.cfg.AtRestKey, nil, lookupKeyInfo, 32)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(customerID + "\x00" + accountID))
	b := m.Sum(nil)[:16]
	b[6] = b[6]&0x0f | 0x80 // version 8 (custom)
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	h := hex.EncodeToString(b)
	return "Lookup:" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], nil
}

// checkLookupID checks a quote's lookupId against its source customer and
// destination account.
func (s *Service) checkLookupID(lookupID, customerID, accountID string) error {
	want, err := s.lookupID(customerID, accountID)
	if err != nil {
		return err
	}
	if !hmac.Equal([]byte(lookupID), []byte(want)) {
		return errLookupNotFound
	}
	return nil
}

// LookupExternalAccount answers GET /receiver/external-account/{accountId}
// (see the comment above): 400 for a malformed customerId or a
// senderUmaAddress that is not the sender's, 404 USER_NOT_FOUND for an
// unknown customer, 404 NOT_FOUND for an id that is not an external account
// of the sender (unknown, malformed, another customer's or the platform's
// alike), 400 for an account that is not ACTIVE.
func (s *Service) LookupExternalAccount(ctx context.Context, req ReceiverLookupRequest) (wire.ReceiverExternalAccountLookup, error) {
	var fe fieldErrors
	if req.CustomerID != "" && !ids.Valid("Customer", req.CustomerID) {
		fe.add("customerId", "must be a Customer:<uuid> id")
	}
	if req.SenderUmaAddress != "" && !validUMA(req.SenderUmaAddress) {
		fe.addConstraint("senderUmaAddress", "must be an UMA address such as $alice@example.com", wire.FieldConstraint{Pattern: umaPattern})
	}
	if e := fe.err(); e != nil {
		return wire.ReceiverExternalAccountLookup{}, e
	}
	type found struct {
		sender   string
		dst      *store.ExternalAccount
		currency string // the sender's
	}
	got, err := read(ctx, s, func(tx store.Tx) (found, error) {
		var cust *store.Customer
		if req.CustomerID != "" {
			c, err := tx.GetCustomer(ctx, req.CustomerID)
			if errors.Is(err, store.ErrNotFound) {
				return found{}, errCustomerNotFound
			} else if err != nil {
				return found{}, err
			}
			cust = c
		}
		notFound := errorf(CodeNotFound, "no external account of this customer has this id")
		if cust == nil {
			notFound = errorf(CodeNotFound, "no customer's external account has this id")
		}
		if !ids.Valid("ExternalAccount", req.AccountID) {
			return found{}, notFound
		}
		dst, err := tx.GetExternalAccount(ctx, req.AccountID)
		if errors.Is(err, store.ErrNotFound) || err == nil && (dst.CustomerID == "" || cust != nil && dst.CustomerID != cust.ID) {
			return found{}, notFound
		} else if err != nil {
			return found{}, err
		}
		if cust == nil {
			if cust, err = tx.GetCustomer(ctx, dst.CustomerID); err != nil {
				return found{}, err
			}
		}
		if req.SenderUmaAddress != "" && req.SenderUmaAddress != cust.UmaAddress {
			return found{}, invalidField("senderUmaAddress", "is not the umaAddress of the sender (customerId, or else the account's customer)")
		}
		if dst.Status != "ACTIVE" {
			return found{}, invalidField("accountId", "the account is "+dst.Status+"; only ACTIVE accounts can receive payments")
		}
		src, err := tx.ListInternalAccounts(ctx, store.InternalAccountFilter{CustomerID: cust.ID, Limit: 1})
		if err != nil {
			return found{}, err
		}
		if len(src.Items) == 0 {
			return found{}, invalidField("customerId", "the customer has no internal account to pay from")
		}
		return found{sender: cust.ID, dst: dst, currency: src.Items[0].Currency}, nil
	})
	if err != nil {
		return wire.ReceiverExternalAccountLookup{}, err
	}
	pref, err := s.currencyPreference(got.currency, got.dst)
	if err != nil {
		return wire.ReceiverExternalAccountLookup{}, err
	}
	id, err := s.lookupID(got.sender, got.dst.ID)
	if err != nil {
		return wire.ReceiverExternalAccountLookup{}, err
	}
	return wire.ReceiverExternalAccountLookup{AccountID: got.dst.ID, SupportedCurrencies: []wire.CurrencyPreference{pref}, LookupID: id}, nil
}

// currencyPreference prices the account's currency from the sender's on
// the rail a quote that names none would use: the estimated rate, and the
// amounts received for the least and the most the sender can send.
func (s *Service) currencyPreference(sending string, dst *store.ExternalAccount) (wire.CurrencyPreference, error) {
	rail := ""
	var info map[string]any
	_ = json.Unmarshal(dst.AccountInfo, &info)
	if offered := s.railsFor(dst, info); len(offered) > 0 {
		rail = offered[0]
	}
	quote := func(amount int64) (rates.Quote, error) {
		return s.rates.Quote(rates.Request{Sending: sending, Receiving: dst.Currency, Rail: rail, Side: rates.SideSending, Amount: amount})
	}
	// The least amount: the currency's minimum, or, when that does not
	// cover the corridor's fees, the least that delivers anything.
	var least rates.Quote
	var err error
	for amount, tries := int64(1), 0; tries < 3; tries++ {
		least, err = quote(amount)
		var ae *rates.AmountError
		if !errors.As(err, &ae) || ae.Min <= amount {
			break
		}
		amount = ae.Min
	}
	if err != nil {
		return wire.CurrencyPreference{}, amountProblem(err, string(rates.SideSending))
	}
	most, err := quote(least.MaxSending)
	if err != nil {
		return wire.CurrencyPreference{}, amountProblem(err, string(rates.SideSending))
	}
	return wire.CurrencyPreference{Currency: s.currencyJSON(dst.Currency), EstimatedExchangeRate: least.ExchangeRate,
		Min: max(least.TotalReceiving, 1), Max: most.TotalReceiving}, nil
}
