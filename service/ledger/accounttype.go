package ledger

// AccountType is what an account of the chart stands for, as the API names
// it.
type AccountType string

const (
	TypeWalletAvailable   AccountType = "WALLET_AVAILABLE"
	TypeWalletHeld        AccountType = "WALLET_HELD"
	TypeClearing          AccountType = "CLEARING"
	TypeFees              AccountType = "FEES"
	TypeFX                AccountType = "FX"
	TypeUnmatchedDeposits AccountType = "UNMATCHED_DEPOSITS"
	TypeSandboxFunding    AccountType = "SANDBOX_FUNDING"
	TypeOpeningBalances   AccountType = "OPENING_BALANCES"
)

// Type is the account's type; "" for an id outside the chart.
func (a Account) Type() AccountType {
	if _, side, ok := a.Wallet(); ok {
		if side == Held {
			return TypeWalletHeld
		}
		return TypeWalletAvailable
	}
	kind, _, _, ok := a.system()
	if !ok {
		return ""
	}
	return map[string]AccountType{"clearing": TypeClearing, "fees": TypeFees, "fx": TypeFX,
		"unmatched": TypeUnmatchedDeposits, "sandbox": TypeSandboxFunding, "opening": TypeOpeningBalances}[kind]
}
