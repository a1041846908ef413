package wire

// CurrencyPreference is a currency a receiver can be paid in, with the
// estimated rate from the sender's currency and the receivable amounts.
type CurrencyPreference struct {
	Currency Currency `json:"currency"`
	// EstimatedExchangeRate is sending-currency units per receiving unit,
	// as a quote's exchangeRate; not locked.
	EstimatedExchangeRate float64 `json:"estimatedExchangeRate"`
	// Min and Max bound the amount received, in the smallest unit of
	// Currency.
	Min int64 `json:"min"`
	Max int64 `json:"max"`
}

// CounterpartyFieldDefinition names a payer field the receiver requires.
type CounterpartyFieldDefinition struct {
	Name      string `json:"name"`
	Mandatory bool   `json:"mandatory"`
}

// ReceiverExternalAccountLookup is the answer of GET
// /receiver/external-account/{accountId}.
type ReceiverExternalAccountLookup struct {
	AccountID               string                        `json:"accountId"`
	SupportedCurrencies     []CurrencyPreference          `json:"supportedCurrencies"`
	RequiredPayerDataFields []CounterpartyFieldDefinition `json:"requiredPayerDataFields,omitempty"`
	LookupID                string                        `json:"lookupId"`
}
