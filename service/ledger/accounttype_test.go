package ledger

import "testing"

func TestAccountType(t *testing.T) {
	for _, c := range []struct {
		a    Account
		want AccountType
	}{
		{WalletAccount(wallet, Available), TypeWalletAvailable},
		{WalletAccount(wallet, Held), TypeWalletHeld},
		{Clearing("ACH", "USD"), TypeClearing},
		{Clearing("", "BTC"), TypeClearing},
		{Fees("USD"), TypeFees},
		{FX("EUR"), TypeFX},
		{Unmatched("USD"), TypeUnmatchedDeposits},
		{Sandbox("USD"), TypeSandboxFunding},
		{Opening("MXN"), TypeOpeningBalances},
		{"LedgerAccount:fees", ""},
		{"LedgerAccount:treasury:USD", ""},
		{"Customer:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", ""},
	} {
		if got := c.a.Type(); got != c.want {
			t.Errorf("%s: %q, want %q", c.a, got, c.want)
		}
	}
}
