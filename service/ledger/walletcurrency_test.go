package ledger

import (
	"strings"
	"testing"
	"time"
)

// TestCheckOneCurrencyPerWallet: the entries of one wallet in a
// transaction are in one currency. Before, a USD entry on a USDC wallet's
// held side passed Check, WalletMoves summed it into a USDC move, and the
// store took it.
func TestCheckOneCurrencyPerWallet(t *testing.T) {
	const w = "InternalAccount:019aa5d2-7c10-7000-8000-000000000001"
	const other = "InternalAccount:019aa5d2-7c10-7000-8000-000000000002"
	at := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		lt   *Transaction
		bad  string // in the error; "" when Check passes
	}{
		{"one wallet, one currency", HoldFor("LedgerTransaction:1", at, "Hold", w, "USDC", 10), ""},
		{"two wallets in their own currencies", New("LedgerTransaction:2", KindIncoming, at, "Split").
			Move(Sandbox("USD"), "USD", 5, WalletAccount(other, Available), "USD", 5).
			Move(Sandbox("USDC"), "USDC", 5, WalletAccount(w, Available), "USDC", 5), ""},
		{"one wallet's sides in two currencies", New("LedgerTransaction:3", KindHold, at, "Hold").
			Add(WalletAccount(w, Available), "USDC", -10).Add(FX("USDC"), "USDC", 10).
			Add(FX("USD"), "USD", -10).Add(WalletAccount(w, Held), "USD", 10), "a wallet holds one currency"},
		{"one side in two currencies", New("LedgerTransaction:4", KindFunding, at, "Funding").
			Move(Sandbox("USDC"), "USDC", 5, WalletAccount(w, Available), "USDC", 5).
			Move(Sandbox("USD"), "USD", 5, WalletAccount(w, Available), "USD", 5), "a wallet holds one currency"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.lt.Check()
			switch {
			case c.bad == "" && err != nil:
				t.Fatalf("Check: %v", err)
			case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
				t.Fatalf("Check = %v, want an error saying %q", err, c.bad)
			}
		})
	}
}
