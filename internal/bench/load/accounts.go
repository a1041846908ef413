package load

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"

	"paywallet/shared/accountrules"
)

// The external accounts the benchmark creates are realistic: every one
// passes the service's validator (shared/accountrules), and they alternate
// between the two kinds a wallet user adds most, a US bank account (ACH)
// and a euro account (IBAN, SEPA). Each account of a stack has its own
// number n, so no two collide on the duplicate check.

// accountInfo is the currency and accountInfo of account number n: a USD
// account when n is even, a EUR one when it is odd.
func accountInfo(n int64) (string, map[string]any) {
	if n%2 == 0 {
		return "USD", map[string]any{
			"accountType":     "USD_ACCOUNT",
			"accountNumber":   fmt.Sprintf("%012d", n),
			"routingNumber":   "021000021",
			"bankAccountType": "CHECKING",
			"bankName":        "Chase Bank",
			"beneficiary": map[string]any{
				"beneficiaryType": "INDIVIDUAL",
				"fullName":        "Ana Maria Diaz",
				"address":         map[string]any{"line1": "1 Main Street", "city": "Springfield", "postalCode": "62701", "country": "US"},
			},
		}
	}
	return "EUR", map[string]any{
		"accountType": "EUR_ACCOUNT",
		"iban":        germanIBAN(n),
		"beneficiary": map[string]any{
			"beneficiaryType": "INDIVIDUAL",
			"fullName":        "Jonas Becker",
			"address":         map[string]any{"line1": "Hauptstraße 5", "city": "Berlin", "postalCode": "10115", "country": "DE"},
		},
	}
}

// accountBody is the POST /customers/external-accounts body of account
// number n of the customer.
func accountBody(customerID string, n int64) []byte {
	currency, info := accountInfo(n)
	return mustJSON(map[string]any{
		"customerId":        customerID,
		"currency":          currency,
		"platformAccountId": "bench-" + strconv.FormatInt(n, 10),
		"accountInfo":       info,
	})
}

// germanIBAN is a valid German IBAN (ISO 13616 check digits) for account n
// at one bank code.
func germanIBAN(n int64) string {
	bban := "37040044" + fmt.Sprintf("%010d", n%10_000_000_000)
	// Check digits: the BBAN followed by the country code as digits
	// (D=13, E=14) and 00, mod 97, subtracted from 98.
	num, _ := new(big.Int).SetString(bban+"131400", 10)
	check := 98 - new(big.Int).Mod(num, big.NewInt(97)).Int64()
	return fmt.Sprintf("DE%02d%s", check, bban)
}

// checkAccountBodies runs the service's validator over both kinds of body,
// so that a mistake here fails at once instead of as a wall of 400s.
func checkAccountBodies() error {
	for n := range int64(2) {
		var body map[string]any
		if err := json.Unmarshal(accountBody("Customer:019aa5d2-7c10-7000-8000-000000000003", n+1), &body); err != nil {
			return err
		}
		if problems := accountrules.ValidateCreate(body); len(problems) > 0 {
			return fmt.Errorf("load: the benchmark's external account body is invalid: %+v", problems)
		}
	}
	return nil
}

// fingerprint is the duplicate-check key of an account, made the way the
// service makes it (SHA-256 of owner, currency and the canonical
// accountInfo): the generated identifiers are already in the case the
// service normalises to.
func fingerprint(customerID, currency string, canonicalInfo []byte) []byte {
	h := sha256.New()
	h.Write([]byte(customerID + "\x00" + currency + "\x00"))
	h.Write(canonicalInfo)
	return h.Sum(nil)
}
