package payments

import (
	"context"
	"fmt"
	"slices"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/shared/wire"
)

// The platform's own internal accounts (GET /platform/internal-accounts):
// the reference creates them "automatically when the platform is
// configured for each supported currency". This service makes one per
// configured wallet currency at start: INTERNAL_FIAT, or INTERNAL_CRYPTO
// for a currency paid out without a bank rail (BTC). They hold no customer's
// money and nothing pays from them: quotes take a customer's account as
// their source, the sandbox funds customers' accounts, and credentials,
// sessions and wallet operations are an EMBEDDED_WALLET's, so each of those
// refuses a platform account with a message that says so.

// platformAccountSetting is the settings row that names the platform's
// internal account of a currency once it exists.
func platformAccountSetting(currency string) string {
	return "platform_internal_account:" + currency
}

// platformCurrencies are the currencies the platform has an internal
// account in: the configured wallet currency.
func (s *Service) platformCurrencies() []string { return []string{s.cfg.WalletCurrency} }

// platformAccountType is INTERNAL_CRYPTO for a currency without payment
// rails (paid over the Spark network), else INTERNAL_FIAT.
func (s *Service) platformAccountType(currency string) string {
	if rails, ok := s.rates.Rails(currency); ok && len(rails) == 0 {
		return "INTERNAL_CRYPTO"
	}
	return "INTERNAL_FIAT"
}

// provisionPlatformAccounts makes the platform's internal account of each
// platform currency that has none yet. It is idempotent across restarts and
// across instances starting at once on one database, as the signer key is
// (loadSigner): each start proposes a fresh account id in the settings row
// of the currency with PutSettingIfAbsent and creates the account only if
// its own proposal was stored, in the same transaction, so exactly one
// account is made per currency whichever start wins.
func (s *Service) provisionPlatformAccounts(ctx context.Context) error {
	for _, currency := range s.platformCurrencies() {
		proposal := ids.New("InternalAccount")
		err := s.store.Tx(ctx, func(tx store.Tx) error {
			stored, err := tx.PutSettingIfAbsent(ctx, platformAccountSetting(currency), []byte(proposal))
			if err != nil || string(stored) != proposal {
				return err
			}
			now := s.now()
			return tx.CreateInternalAccount(ctx, &store.InternalAccount{ID: proposal, Type: s.platformAccountType(currency),
				Status: "ACTIVE", Currency: currency, CreatedAt: now, UpdatedAt: now})
		})
		if err != nil {
			return fmt.Errorf("service: provision the platform's %s internal account: %w", currency, err)
		}
	}
	return nil
}

// PlatformInternalAccountFilter is the query of ListPlatformInternalAccounts:
// each filter applies when not empty.
type PlatformInternalAccountFilter struct {
	Type     string `query:"type"` // INTERNAL_FIAT, INTERNAL_CRYPTO or EMBEDDED_WALLET
	Currency string `query:"currency"`
}

// ListPlatformInternalAccounts is every internal account of the platform
// (GET /platform/internal-accounts), oldest first, with the filters type
// and currency. The reference's answer is {data} without paging: the
// platform has one account per currency.
func (s *Service) ListPlatformInternalAccounts(ctx context.Context, req PlatformInternalAccountFilter) (wire.Data[wire.InternalAccount], error) {
	var fe fieldErrors
	if req.Type != "" && !slices.Contains(internalAccountTypes, req.Type) {
		fe.addConstraint("type", "unknown internal account type", wire.FieldConstraint{Enum: internalAccountTypes})
	}
	if req.Currency != "" && !currencyCode(req.Currency) {
		fe.addConstraint("currency", "must be a currency code such as USD or BTC", wire.FieldConstraint{Pattern: "^[A-Z]{3,4}$"})
	}
	if e := fe.err(); e != nil {
		return wire.Data[wire.InternalAccount]{}, e
	}
	return read(ctx, s, func(tx store.Tx) (wire.Data[wire.InternalAccount], error) {
		out := wire.Data[wire.InternalAccount]{Data: []wire.InternalAccount{}}
		f := store.InternalAccountFilter{Platform: true, Type: req.Type, Currency: req.Currency, Limit: 100}
		for {
			page, err := tx.ListInternalAccounts(ctx, f)
			if err != nil {
				return wire.Data[wire.InternalAccount]{}, err
			}
			for i := range page.Items {
				out.Data = append(out.Data, s.internalAccountJSON(&page.Items[i]))
			}
			if !page.HasMore {
				return out, nil
			}
			f.Cursor = page.NextCursor
		}
	})
}
