package wire

import "strconv"

// WalletLimits is an embedded wallet's personal limits (GET and PATCH
// /internal-accounts/{id}/limits; our extension), amounts in the smallest
// unit of Currency, the wallet's. PerPayment and Daily are null when there
// is no such limit; NewRecipientCoolingOffHours 0 is off. Pending is the
// loosening that waits for its effectiveAt, or null.
type WalletLimits struct {
	AccountID                   string               `json:"accountId"`
	Currency                    string               `json:"currency"`
	PerPayment                  *int64               `json:"perPayment"`
	Daily                       *int64               `json:"daily"`
	NewRecipientCoolingOffHours int                  `json:"newRecipientCoolingOffHours"`
	Pending                     *PendingWalletLimits `json:"pending"`
	UpdatedAt                   string               `json:"updatedAt"`
}

// PendingWalletLimits is a change of limits that takes effect at
// EffectiveAt: only the members it changes are present, a limit that will
// be removed as null.
type PendingWalletLimits struct {
	PerPayment                  PendingLimit `json:"perPayment,omitzero"`
	Daily                       PendingLimit `json:"daily,omitzero"`
	NewRecipientCoolingOffHours *int         `json:"newRecipientCoolingOffHours,omitempty"`
	EffectiveAt                 string       `json:"effectiveAt"`
}

// PendingLimit is one amount of a pending change: absent when the change
// leaves it alone (Set false), null when it removes the limit (Amount nil),
// else the new amount. A JSON member of this type tells the three apart
// both ways.
type PendingLimit struct {
	Set    bool
	Amount *int64
}

// IsZero makes an unset member absent (omitzero).
func (p PendingLimit) IsZero() bool { return !p.Set }

// MarshalJSON writes the amount, or null for a removal.
func (p PendingLimit) MarshalJSON() ([]byte, error) {
	if p.Amount == nil {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, *p.Amount, 10), nil
}

// UnmarshalJSON reads a present member: null is a removal. (strconv, not
// encoding/json: the wasm wallet's dependencies stay free of it; see
// shared/accountrules' TestImports.)
func (p *PendingLimit) UnmarshalJSON(b []byte) error {
	p.Set, p.Amount = true, nil
	if string(b) == "null" {
		return nil
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return err
	}
	p.Amount = &v
	return nil
}

// WalletLimitsUpdateRequest is the body of PATCH
// /internal-accounts/{id}/limits: each member present changes that limit,
// null removes perPayment or daily. (The service reads the members itself,
// to tell null from absent; this type documents the shape.)
type WalletLimitsUpdateRequest struct {
	PerPayment                  PendingLimit `json:"perPayment,omitzero"`
	Daily                       PendingLimit `json:"daily,omitzero"`
	NewRecipientCoolingOffHours *int         `json:"newRecipientCoolingOffHours,omitempty"`
}
