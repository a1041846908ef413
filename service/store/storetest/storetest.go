// Package storetest is the conformance suite every [store.Store]
// implementation must pass. An implementation's test calls [Run] with a
// function that opens a fresh, empty store:
//
//	func TestSQLite(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s, err := sqlstore.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// The suite checks the contract documented in package store, not any one
// implementation: round trips of every field, ErrNotFound and ErrConflict,
// pagination, the compare-and-set methods under concurrency (run it with
// -race), and transaction rollback. Its top-level subtests run in parallel,
// each on its own store.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"paywallet/service/store"
)

// Run runs the suite. open is called once per subtest and must return a new,
// empty store; it should close the store with t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(*fixture)
	}{
		{"Settings", testSettings},
		{"SettingsConcurrentFirstStart", testSettingsConcurrent},
		{"SettingsReplace", testSettingsReplace},
		{"SettingsConcurrentReplace", testSettingsConcurrentReplace},
		{"CustomerRoundTrip", testCustomerRoundTrip},
		{"CustomerConflict", testCustomerConflict},
		{"CustomerList", testCustomerList},
		{"CustomerByUmaAddress", testCustomerByUmaAddress},
		{"PageLimits", testPageLimits},
		{"PaginationStable", testPaginationStable},
		{"InternalAccountRoundTrip", testAccountRoundTrip},
		{"InternalAccountList", testAccountList},
		{"CredentialRoundTrip", testCredentialRoundTrip},
		{"CredentialConflicts", testCredentialConflicts},
		{"CredentialConcurrentEmail", testCredentialConcurrentEmail},
		{"CredentialLock", testCredentialLock},
		{"CredentialUpdates", testCredentialUpdates},
		{"DeleteCredential", testDeleteCredential},
		{"RegistrationChallenge", testRegistrationChallenge},
		{"LatestChallenge", testLatestChallenge},
		{"AccountAndCustomerUpdates", testAccountAndCustomerUpdates},
		{"OTP", testOTP},
		{"OTPSupersede", testOTPSupersede},
		{"Challenge", testChallenge},
		{"Session", testSession},
		{"ListActiveSessions", testListActiveSessions},
		{"NotFound", testNotFound},
		{"MissingReference", testMissingReference},
		{"DuplicateID", testDuplicateID},
		{"CompareAndSetRace", testCASRace},
		{"TxRollback", testTxRollback},
		{"TxPanic", testTxPanic},
		{"TxCanceledContext", testTxCanceled},
		{"TxFor", testTxFor},
		{"TxForTurns", testTxForTurns},
		// store.ExternalAccountTx (external.go)
		{"ExternalAccountRoundTrip", testExternalAccountRoundTrip},
		{"ExternalAccountConflict", testExternalAccountConflict},
		{"ExternalAccountDefault", testExternalAccountDefault},
		{"ExternalAccountDefaultRace", testExternalAccountDefaultRace},
		{"ExternalAccountList", testExternalAccountList},
		{"ExternalAccountPaginationStable", testExternalAccountPaginationStable},
		{"PendingExternalAccounts", testPendingExternalAccounts},
		{"UpdateExternalAccountStatus", testUpdateExternalAccountStatus},
		{"Agent", testAgent},
		{"DeviceCode", testDeviceCode},
		{"DeviceCodeExpiry", testDeviceCodeExpiry},
		{"DeviceCodeRace", testDeviceCodeRace},
		{"AgentToken", testAgentToken},
		{"ExternalNotFound", testExternalNotFound},
		{"ExternalMissingReference", testExternalMissingReference},
		// store.MoneyTx (money.go)
		{"Balances", testBalances},
		{"BalanceHoldRace", testHoldRace},
		{"BalanceCreditRace", testCreditRace},
		{"MoneyTxRollback", testMoneyRollback},
		{"QuoteRoundTrip", testQuoteRoundTrip},
		{"TransactionRoundTrip", testTransactionRoundTrip},
		{"TransactionList", testTransactionList},
		{"AdvanceTransaction", testAdvanceTransaction},
		{"AdvanceTransactionRace", testAdvanceRace},
		{"ConfirmReceipt", testConfirmReceipt},
		{"DueTransactions", testDueTransactions},
		{"ClaimDueTransaction", testClaimDueTransaction},
		{"IdempotencyRecord", testIdempotencyRecord},
		{"IdempotencyRecordRace", testIdempotencyRace},
		{"DeleteIdempotencyRecords", testDeleteIdempotencyRecords},
		{"MoneyNotFound", testMoneyNotFound},
		{"MoneyMissingReference", testMoneyMissingReference},
		{"MoneyDuplicateID", testMoneyDuplicateID},
		{"DepositReferences", testDepositReferences},
		{"IncomingReferenceUnique", testIncomingReferenceUnique},
		{"QuoteFundingReference", testQuoteFundingReference},
		{"LedgerSealChain", testLedgerSealChain},
		// store.WebhookTx (webhooks.go)
		{"EventsCatalog", testEventsCatalog},
		{"EventsRollback", testEventsRollback},
		{"EventsConcurrent", testEventsConcurrent},
		{"EventsList", testEventsList},
		{"EventsRetention", testEventsRetention},
		{"WebhookEndpoint", testWebhookEndpoint},
		{"WebhookEndpointTypes", testWebhookEndpointTypes},
		{"WebhookClaim", testWebhookClaim},
		{"WebhookClaimRace", testWebhookClaimRace},
		{"WebhookFinishRound", testWebhookFinishRound},
		{"WebhookRetryOrder", testWebhookRetryOrder},
		{"WebhookReplay", testWebhookReplay},
		{"WebhookAttempts", testWebhookAttempts},
		// customers' reference fields and deletion (customers.go)
		{"CustomerFields", testCustomerFields},
		{"DeleteCustomer", testDeleteCustomer},
		{"PaymentsInFlight", testPaymentsInFlight},
		// store.AgentTx (agents.go)
		{"AgentQuote", testAgentQuote},
		{"AgentActions", testAgentActions},
		{"AgentManagement", testAgentManagement},
		{"AgentApprovals", testAgentApprovals},
		{"ListByIDs", testListByIDs},
		// store.APITokenTx (apitokens.go)
		{"APIToken", testAPIToken},
		{"APITokenList", testAPITokenList},
		// store.SecurityTx and store.SignOutLinkTx (security.go)
		{"SecurityEventChain", testSecurityEventChain},
		{"SecurityEventList", testSecurityEventList},
		{"SecurityEventConcurrent", testSecurityEventConcurrent},
		{"SignOutLink", testSignOutLink},
		// store.LedgerTx and store.LedgerSealer (ledger.go)
		{"LedgerPostEachKind", testLedgerPostEachKind},
		{"LedgerStatement", testLedgerStatement},
		{"LedgerRefusals", testLedgerRefusals},
		{"LedgerResolveOnce", testLedgerResolveOnce},
		{"LedgerResolveRace", testLedgerResolveRace},
		{"LedgerSeal", testLedgerSeal},
		{"LedgerSealRace", testLedgerSealRace},
		// store.LimitsTx (limits.go)
		{"WalletLimits", testWalletLimits},
		{"OutgoingSince", testOutgoingSince},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			tc.fn(&fixture{T: t, s: s, ctx: t.Context(), open: open})
		})
	}
}

// fixture bundles the store of one subtest with helpers that fail the test
// on unexpected errors.
type fixture struct {
	*testing.T
	s   store.Store
	ctx context.Context
	// open opens another fresh store, for a test that compares two.
	open func(t *testing.T) store.Store
}

// tx runs fn in a transaction that must succeed.
func (f *fixture) tx(fn func(store.Tx) error) {
	f.Helper()
	if err := f.s.Tx(f.ctx, fn); err != nil {
		f.Fatalf("Tx: %v", err)
	}
}

// ---- test data

// idSeq makes ids shaped like the service's (<Type>:<UUIDv7>) whose
// lexical order is the order they were made in. Ids below idLow are
// reserved for "older" ids made on purpose (see lowID).
var idSeq atomic.Uint64

const idLow = 1 << 32

func init() { idSeq.Store(idLow) }

func newID(prefix string) string { return uuidID(prefix, idSeq.Add(1)) }

// lowID makes an id that sorts before every id newID made.
func lowID(prefix string, n uint64) string { return uuidID(prefix, n) }

func uuidID(prefix string, n uint64) string {
	return fmt.Sprintf("%s:019aa5d2-7c10-7000-8000-%012x", prefix, n)
}

// base is the suite's "now". Test times are whole microseconds in UTC, so
// values read back compare equal with ==.
var base = time.Date(2026, 11, 22, 9, 30, 15, 123456000, time.UTC)

func at(d time.Duration) time.Time { return base.Add(d) }

func newCustomer() *store.Customer {
	id := newID("Customer")
	return &store.Customer{
		ID:                 id,
		PlatformCustomerID: "platform-" + id,
		CustomerType:       "INDIVIDUAL",
		Email:              "Someone.Else+tag@Example.com",
		UmaAddress:         "$someone@uma.example",
		FullName:           "Zoë Ñandú O'Brien",
		KYCStatus:          "APPROVED",
		CreatedAt:          at(1 * time.Second),
		UpdatedAt:          at(2 * time.Second),
	}
}

func newAccount(customerID string) *store.InternalAccount {
	return &store.InternalAccount{
		ID:             newID("InternalAccount"),
		CustomerID:     customerID,
		Type:           "EMBEDDED_WALLET",
		Status:         "ACTIVE",
		Currency:       "USDC",
		PrivateEnabled: true,
		CreatedAt:      at(3 * time.Second),
		UpdatedAt:      at(4 * time.Second),
	}
}

// newCredential fills the fields of the type: a passkey gets its own
// WebAuthn credential id and record, an OAuth credential its own identity.
func newCredential(accountID, typ, nickname string) *store.Credential {
	c := &store.Credential{
		ID:        newID("AuthMethod"),
		AccountID: accountID,
		Type:      typ,
		Nickname:  nickname,
		CreatedAt: at(5 * time.Second),
		UpdatedAt: at(6 * time.Second),
	}
	switch typ {
	case "PASSKEY":
		c.CredentialID = "cred-" + c.ID[len(c.ID)-12:]
		c.Passkey = []byte(`{"id":"` + c.CredentialID + `","publicKey":"pQECAyYgASFYIA"}`)
		c.SignCount = 7
	case "OAUTH":
		c.OIDCIssuer = "https://issuer.example"
		c.OIDCSubject = "sub-" + c.ID[len(c.ID)-12:]
		c.OIDCAudience = "client-1"
	}
	return c
}

func newOTP(credentialID string, created time.Time) *store.OTP {
	return &store.OTP{
		ID:               newID("Otp"),
		CredentialID:     credentialID,
		CodeHash:         bytes.Repeat([]byte{0xc0, 0x00, 0xde}, 11)[:32],
		TargetPrivateKey: append([]byte{0, 0, 1}, bytes.Repeat([]byte{0xff}, 29)...),
		CreatedAt:        created,
		ExpiresAt:        created.Add(10 * time.Minute),
	}
}

func newChallenge(accountID string) *store.Challenge {
	return &store.Challenge{
		ID:        newID("Request"),
		Operation: "auth.credentials.verify",
		TargetID:  newID("AuthMethod"),
		AccountID: accountID,
		BodyHash:  []byte{0, 1, 2, 3, 0xfe, 0xff, 0},
		Payload:   `{"type":"ACTIVITY","nonce":"\u00e9\u0000x"}` + "\n\x00tail",
		CreatedAt: at(7 * time.Second),
		ExpiresAt: at(7*time.Second + 5*time.Minute),
	}
}

func newSession(accountID, credentialID string, expires time.Time) *store.Session {
	return &store.Session{
		ID:           newID("Session"),
		AccountID:    accountID,
		CredentialID: credentialID,
		Type:         "EMAIL_OTP",
		Nickname:     "user@example.com",
		PublicKey:    append([]byte{0x02}, bytes.Repeat([]byte{0xab, 0x00}, 16)...),
		CreatedAt:    at(8 * time.Second),
		UpdatedAt:    at(9 * time.Second),
		ExpiresAt:    expires,
	}
}

// world creates a customer, an account and an EMAIL_OTP credential with a
// unique e-mail, for tests that need something to hang records on.
func (f *fixture) world() (*store.Customer, *store.InternalAccount, *store.Credential) {
	f.Helper()
	c := newCustomer()
	a := newAccount(c.ID)
	cr := newCredential(a.ID, "EMAIL_OTP", "user-"+a.ID[len(a.ID)-12:]+"@example.com")
	f.tx(func(tx store.Tx) error {
		if err := tx.CreateCustomer(f.ctx, c); err != nil {
			return err
		}
		if err := tx.CreateInternalAccount(f.ctx, a); err != nil {
			return err
		}
		return tx.CreateCredential(f.ctx, cr)
	})
	return c, a, cr
}

// same fails the test unless got and want are deeply equal.
func same[T any](t testing.TB, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func wantErr(t testing.TB, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: got error %v, want %v", what, err, target)
	}
}

// ---- settings

func testSettings(f *fixture) {
	f.tx(func(tx store.Tx) error {
		_, err := tx.GetSetting(f.ctx, "signer")
		wantErr(f, "GetSetting of a missing key", err, store.ErrNotFound)

		first := []byte{0x00, 0x01, 0xff, 0x00}
		got, err := tx.PutSettingIfAbsent(f.ctx, "signer", first)
		if err != nil {
			return err
		}
		same(f, "PutSettingIfAbsent of a new key", got, first)

		got, err = tx.PutSettingIfAbsent(f.ctx, "signer", []byte("second"))
		if err != nil {
			return err
		}
		same(f, "PutSettingIfAbsent of an existing key returns the stored value", got, first)
		return nil
	})
	f.tx(func(tx store.Tx) error {
		got, err := tx.GetSetting(f.ctx, "signer")
		if err != nil {
			return err
		}
		same(f, "GetSetting after commit", got, []byte{0x00, 0x01, 0xff, 0x00})
		_, err = tx.GetSetting(f.ctx, "Signer")
		wantErr(f, "keys are case-sensitive", err, store.ErrNotFound)
		return nil
	})
}

// testSettingsReplace is the compare-and-set of a setting: it writes only
// over the expected value, and the rollback of its transaction undoes it.
func testSettingsReplace(f *fixture) {
	f.tx(func(tx store.Tx) error {
		won, err := tx.ReplaceSetting(f.ctx, "signer", []byte("raw"), []byte("sealed"))
		if err != nil {
			return err
		}
		if won {
			f.Error("ReplaceSetting of a missing key reported a write")
		}
		if _, err := tx.GetSetting(f.ctx, "signer"); !errors.Is(err, store.ErrNotFound) {
			f.Errorf("ReplaceSetting of a missing key created it: %v", err)
		}
		if _, err := tx.PutSettingIfAbsent(f.ctx, "signer", []byte{0x00, 'r', 'a', 'w'}); err != nil {
			return err
		}
		if _, err := tx.PutSettingIfAbsent(f.ctx, "other", []byte{0x00, 'r', 'a', 'w'}); err != nil {
			return err
		}
		won, err = tx.ReplaceSetting(f.ctx, "signer", []byte("raw"), []byte("sealed"))
		if err != nil {
			return err
		}
		if won {
			f.Error("ReplaceSetting over another value reported a write")
		}
		won, err = tx.ReplaceSetting(f.ctx, "signer", []byte{0x00, 'r', 'a', 'w'}, []byte{0x01, 0x00, 0xff})
		if err != nil {
			return err
		}
		if !won {
			f.Error("ReplaceSetting over the expected value reported no write")
		}
		got, err := tx.GetSetting(f.ctx, "signer")
		if err != nil {
			return err
		}
		same(f, "GetSetting after ReplaceSetting", got, []byte{0x01, 0x00, 0xff})
		return nil
	})
	f.tx(func(tx store.Tx) error {
		got, err := tx.GetSetting(f.ctx, "signer")
		if err != nil {
			return err
		}
		same(f, "replaced setting after commit", got, []byte{0x01, 0x00, 0xff})
		got, err = tx.GetSetting(f.ctx, "other")
		if err != nil {
			return err
		}
		same(f, "another key is untouched", got, []byte{0x00, 'r', 'a', 'w'})
		return nil
	})
	rollback := errors.New("roll back")
	err := f.s.Tx(f.ctx, func(tx store.Tx) error {
		if _, err := tx.ReplaceSetting(f.ctx, "other", []byte{0x00, 'r', 'a', 'w'}, []byte("gone")); err != nil {
			return err
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		f.Fatalf("Tx: %v", err)
	}
	f.tx(func(tx store.Tx) error {
		got, err := tx.GetSetting(f.ctx, "other")
		if err != nil {
			return err
		}
		same(f, "ReplaceSetting rolled back", got, []byte{0x00, 'r', 'a', 'w'})
		return nil
	})
}

// testSettingsConcurrentReplace is several instances upgrading one setting
// at once, each reading the old value and writing its own new one: exactly
// one write wins and every instance then reads the winner's value.
func testSettingsConcurrentReplace(f *fixture) {
	f.tx(func(tx store.Tx) error {
		_, err := tx.PutSettingIfAbsent(f.ctx, "key", []byte("old"))
		return err
	})
	const n = 8
	var wg sync.WaitGroup
	got := make([][]byte, n)
	for i := range n {
		wg.Go(func() {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				v, err := tx.GetSetting(f.ctx, "key")
				if err != nil {
					return err
				}
				if string(v) == "old" {
					won, err := tx.ReplaceSetting(f.ctx, "key", v, []byte{byte(i), 0xaa})
					if err != nil {
						return err
					}
					if !won { // transactions are serializable: what it read is still there
						return fmt.Errorf("ReplaceSetting lost over the value the same transaction read")
					}
					v = []byte{byte(i), 0xaa}
				}
				got[i] = v
				return nil
			})
			if err != nil {
				f.Errorf("instance %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	for i := range n {
		if got[i] == nil || !bytes.Equal(got[i], got[0]) {
			f.Fatalf("instances disagree: %x vs %x", got[i], got[0])
		}
	}
	if len(got[0]) != 2 || got[0][1] != 0xaa {
		f.Fatalf("stored value %x is none of the proposals", got[0])
	}
}

// testSettingsConcurrent is several instances starting at once, each
// proposing its own value: all must end up with the same one.
func testSettingsConcurrent(f *fixture) {
	const n = 8
	var wg sync.WaitGroup
	got := make([][]byte, n)
	for i := range n {
		wg.Go(func() {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				v, err := tx.PutSettingIfAbsent(f.ctx, "key", []byte{byte(i), 0xaa})
				got[i] = v
				return err
			})
			if err != nil {
				f.Errorf("instance %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	for i := 1; i < n; i++ {
		if !bytes.Equal(got[i], got[0]) {
			f.Fatalf("instances disagree: %x vs %x", got[i], got[0])
		}
	}
	if len(got[0]) != 2 || got[0][1] != 0xaa {
		f.Fatalf("stored value %x is none of the proposed ones", got[0])
	}
}

// ---- customers

func testCustomerRoundTrip(f *fixture) {
	full := newCustomer()
	// Empty optional fields; a customer without platform id must not clash
	// with another one without.
	bare1 := &store.Customer{ID: newID("Customer"), CustomerType: "BUSINESS", CreatedAt: at(0), UpdatedAt: at(0)}
	bare2 := &store.Customer{ID: newID("Customer"), CustomerType: "BUSINESS", CreatedAt: at(0), UpdatedAt: at(0)}
	// Times in another zone and with nanoseconds come back in UTC,
	// truncated to the microsecond; times before 1970 and after 2038 work.
	zone := time.FixedZone("UTC-7", -7*3600)
	odd := newCustomer()
	odd.CreatedAt = time.Date(1969, 7, 20, 20, 17, 40, 999_999_999, zone)
	odd.UpdatedAt = time.Date(2099, 12, 31, 23, 59, 59, 1_001, zone)
	oddWant := *odd
	oddWant.CreatedAt = odd.CreatedAt.UTC().Truncate(time.Microsecond)
	oddWant.UpdatedAt = odd.UpdatedAt.UTC().Truncate(time.Microsecond)

	cases := []struct {
		name     string
		in, want *store.Customer
	}{
		{"all fields", full, full},
		{"empty optional fields", bare1, bare1},
		{"second without platform id", bare2, bare2},
		{"times normalised to UTC microseconds", odd, &oddWant},
	}
	for _, c := range cases {
		f.Run(c.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateCustomer(f.ctx, c.in) })
			if err != nil {
				t.Fatalf("CreateCustomer: %v", err)
			}
			err = f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := tx.GetCustomer(f.ctx, c.in.ID)
				if err != nil {
					return err
				}
				same(t, "GetCustomer", *got, *c.want)
				if got.CreatedAt.Location() != time.UTC {
					t.Errorf("CreatedAt location %v, want UTC", got.CreatedAt.Location())
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func testCustomerConflict(f *fixture) {
	a := newCustomer()
	f.tx(func(tx store.Tx) error { return tx.CreateCustomer(f.ctx, a) })

	b := newCustomer()
	b.PlatformCustomerID = a.PlatformCustomerID
	b.FullName = "Someone Else"
	// The caller may carry on after a conflict within the same
	// transaction, and what it does afterwards commits.
	after := newCustomer()
	f.tx(func(tx store.Tx) error {
		wantErr(f, "CreateCustomer with a taken PlatformCustomerID", tx.CreateCustomer(f.ctx, b), store.ErrConflict)
		return tx.CreateCustomer(f.ctx, after)
	})
	f.tx(func(tx store.Tx) error {
		_, err := tx.GetCustomer(f.ctx, b.ID)
		wantErr(f, "the refused customer", err, store.ErrNotFound)
		got, err := tx.GetCustomer(f.ctx, a.ID)
		if err != nil {
			return err
		}
		same(f, "the first customer is untouched", *got, *a)
		if _, err := tx.GetCustomer(f.ctx, after.ID); err != nil {
			f.Errorf("write after the conflict: %v", err)
		}
		p, err := tx.ListCustomers(f.ctx, store.CustomerFilter{PlatformCustomerID: a.PlatformCustomerID})
		if err != nil {
			return err
		}
		if p.TotalCount != 1 || len(p.Items) != 1 || p.Items[0].ID != a.ID {
			f.Errorf("customers with the platform id: %+v", p)
		}
		return nil
	})
}

func ids[T any](items []T, id func(*T) string) []string {
	out := make([]string, len(items))
	for i := range items {
		out[i] = id(&items[i])
	}
	return out
}

func customerIDs(cs []store.Customer) []string {
	return ids(cs, func(c *store.Customer) string { return c.ID })
}

func testCustomerList(f *fixture) {
	var all, business []string
	var byPlatform *store.Customer
	f.tx(func(tx store.Tx) error {
		for i := range 7 {
			c := newCustomer()
			if i%3 == 0 {
				c.CustomerType = "BUSINESS"
				business = append(business, c.ID)
			}
			if i == 4 {
				byPlatform = c
			}
			if err := tx.CreateCustomer(f.ctx, c); err != nil {
				return err
			}
			all = append(all, c.ID)
		}
		return nil
	})
	cases := []struct {
		name   string
		filter store.CustomerFilter
		want   []string
	}{
		{"no filter", store.CustomerFilter{}, all},
		{"by type", store.CustomerFilter{CustomerType: "BUSINESS"}, business},
		{"by platform id", store.CustomerFilter{PlatformCustomerID: byPlatform.PlatformCustomerID}, []string{byPlatform.ID}},
		{"both, matching", store.CustomerFilter{PlatformCustomerID: byPlatform.PlatformCustomerID, CustomerType: "INDIVIDUAL"}, []string{byPlatform.ID}},
		{"both, not matching", store.CustomerFilter{PlatformCustomerID: byPlatform.PlatformCustomerID, CustomerType: "BUSINESS"}, nil},
		{"unknown type", store.CustomerFilter{CustomerType: "NOPE"}, nil},
		{"cursor", store.CustomerFilter{Cursor: all[2]}, all[3:]},
		{"cursor and filter", store.CustomerFilter{Cursor: business[0], CustomerType: "BUSINESS"}, business[1:]},
		{"cursor after the last", store.CustomerFilter{Cursor: all[len(all)-1]}, nil},
	}
	for _, c := range cases {
		f.Run(c.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				p, err := tx.ListCustomers(f.ctx, c.filter)
				if err != nil {
					return err
				}
				if got := customerIDs(p.Items); !slices.Equal(got, c.want) {
					t.Errorf("ids %v, want %v", got, c.want)
				}
				if p.HasMore || p.NextCursor != "" {
					t.Errorf("HasMore %v NextCursor %q on a single page", p.HasMore, p.NextCursor)
				}
				// TotalCount ignores the cursor.
				wantTotal := len(c.want)
				if c.filter.Cursor != "" {
					all := c.filter
					all.Cursor = ""
					q, err := tx.ListCustomers(t.Context(), all)
					if err != nil {
						return err
					}
					wantTotal = len(q.Items)
				}
				if p.TotalCount != wantTotal {
					t.Errorf("TotalCount %d, want %d", p.TotalCount, wantTotal)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	// A full record comes back from a list as from Get.
	f.tx(func(tx store.Tx) error {
		p, err := tx.ListCustomers(f.ctx, store.CustomerFilter{PlatformCustomerID: byPlatform.PlatformCustomerID})
		if err != nil {
			return err
		}
		same(f, "listed customer", p.Items, []store.Customer{*byPlatform})
		return nil
	})
}

func testPageLimits(f *fixture) {
	const n = 105
	var all []string
	f.tx(func(tx store.Tx) error {
		for range n {
			c := newCustomer()
			if err := tx.CreateCustomer(f.ctx, c); err != nil {
				return err
			}
			all = append(all, c.ID)
		}
		return nil
	})
	cases := []struct {
		name      string
		filter    store.CustomerFilter
		want      []string
		wantMore  bool
		wantTotal int
	}{
		{"limit 0 means 20", store.CustomerFilter{}, all[:20], true, n},
		{"limit 1", store.CustomerFilter{Limit: 1}, all[:1], true, n},
		{"limit 100", store.CustomerFilter{Limit: 100}, all[:100], true, n},
		{"limit above 100 is clamped", store.CustomerFilter{Limit: 1000}, all[:100], true, n},
		{"page exactly fills the rest", store.CustomerFilter{Limit: 5, Cursor: all[n-6]}, all[n-5:], false, n},
		{"page one short of the rest", store.CustomerFilter{Limit: 4, Cursor: all[n-6]}, all[n-5 : n-1], true, n},
		{"last page is short", store.CustomerFilter{Limit: 20, Cursor: all[99]}, all[100:], false, n},
	}
	for _, c := range cases {
		f.Run(c.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				p, err := tx.ListCustomers(f.ctx, c.filter)
				if err != nil {
					return err
				}
				if got := customerIDs(p.Items); !slices.Equal(got, c.want) {
					t.Errorf("got %d ids %v…, want %d", len(got), got[:min(len(got), 3)], len(c.want))
				}
				if p.HasMore != c.wantMore {
					t.Errorf("HasMore %v, want %v", p.HasMore, c.wantMore)
				}
				switch {
				case c.wantMore && p.NextCursor != c.want[len(c.want)-1]:
					t.Errorf("NextCursor %q, want the last id of the page %q", p.NextCursor, c.want[len(c.want)-1])
				case !c.wantMore && p.NextCursor != "":
					t.Errorf("NextCursor %q on the last page", p.NextCursor)
				}
				if p.TotalCount != c.wantTotal {
					t.Errorf("TotalCount %d, want %d", p.TotalCount, c.wantTotal)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// testPaginationStable walks the pages while rows are being inserted:
// rows that existed at the start are each seen exactly once, rows inserted
// after the cursor position show up, rows inserted before it do not, and no
// id is returned twice.
func testPaginationStable(f *fixture) {
	var original []string
	f.tx(func(tx store.Tx) error {
		for range 10 {
			a := newAccount("")
			if err := tx.CreateInternalAccount(f.ctx, a); err != nil {
				return err
			}
			original = append(original, a.ID)
		}
		return nil
	})
	var seen, added []string
	cursor := ""
	for page := 0; ; page++ {
		if page > 20 {
			f.Fatal("pagination does not end")
		}
		var p store.Page[store.InternalAccount]
		f.tx(func(tx store.Tx) (err error) {
			p, err = tx.ListInternalAccounts(f.ctx, store.InternalAccountFilter{Limit: 3, Cursor: cursor})
			return err
		})
		seen = append(seen, ids(p.Items, func(a *store.InternalAccount) string { return a.ID })...)
		if p.TotalCount != len(original)+2*page {
			f.Errorf("page %d: TotalCount %d, want %d", page, p.TotalCount, len(original)+2*page)
		}
		if !p.HasMore {
			if p.NextCursor != "" {
				f.Errorf("last page has NextCursor %q", p.NextCursor)
			}
			break
		}
		cursor = p.NextCursor
		// Between pages: one row newer than everything (it must appear)
		// and one older than the cursor (it must not).
		newer := newAccount("")
		older := newAccount("")
		older.ID = lowID("InternalAccount", uint64(page+1))
		f.tx(func(tx store.Tx) error {
			if err := tx.CreateInternalAccount(f.ctx, newer); err != nil {
				return err
			}
			return tx.CreateInternalAccount(f.ctx, older)
		})
		added = append(added, newer.ID)
	}
	want := append(slices.Clone(original), added...)
	if !slices.Equal(seen, want) {
		f.Errorf("pages returned\n%v\nwant\n%v", seen, want)
	}
}

// ---- internal accounts

func testAccountRoundTrip(f *fixture) {
	c := newCustomer()
	f.tx(func(tx store.Tx) error { return tx.CreateCustomer(f.ctx, c) })
	owned := newAccount(c.ID)
	platform := newAccount("")
	platform.Type = "INTERNAL_FIAT"
	platform.Currency = "USD"
	platform.PrivateEnabled = false
	for _, a := range []*store.InternalAccount{owned, platform} {
		f.tx(func(tx store.Tx) error { return tx.CreateInternalAccount(f.ctx, a) })
		f.tx(func(tx store.Tx) error {
			got, err := tx.GetInternalAccount(f.ctx, a.ID)
			if err != nil {
				return err
			}
			same(f, "GetInternalAccount", *got, *a)
			return nil
		})
	}
}

func testAccountList(f *fixture) {
	c1, c2 := newCustomer(), newCustomer()
	type acct struct {
		customer, typ, currency string
	}
	spec := []acct{
		{c1.ID, "EMBEDDED_WALLET", "USDC"},
		{c1.ID, "INTERNAL_FIAT", "USD"},
		{c2.ID, "EMBEDDED_WALLET", "USDC"},
		{"", "INTERNAL_FIAT", "USD"},
		{"", "INTERNAL_CRYPTO", "USDC"},
		{c1.ID, "INTERNAL_FIAT", "EUR"},
	}
	var made []*store.InternalAccount
	f.tx(func(tx store.Tx) error {
		for _, c := range []*store.Customer{c1, c2} {
			if err := tx.CreateCustomer(f.ctx, c); err != nil {
				return err
			}
		}
		for _, s := range spec {
			a := newAccount(s.customer)
			a.Type, a.Currency = s.typ, s.currency
			if err := tx.CreateInternalAccount(f.ctx, a); err != nil {
				return err
			}
			made = append(made, a)
		}
		return nil
	})
	pick := func(idx ...int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, made[i].ID)
		}
		return out
	}
	cases := []struct {
		name   string
		filter store.InternalAccountFilter
		want   []string
	}{
		{"all", store.InternalAccountFilter{}, pick(0, 1, 2, 3, 4, 5)},
		{"by customer", store.InternalAccountFilter{CustomerID: c1.ID}, pick(0, 1, 5)},
		{"by type", store.InternalAccountFilter{Type: "INTERNAL_FIAT"}, pick(1, 3, 5)},
		{"by currency", store.InternalAccountFilter{Currency: "USDC"}, pick(0, 2, 4)},
		{"customer and type", store.InternalAccountFilter{CustomerID: c1.ID, Type: "INTERNAL_FIAT"}, pick(1, 5)},
		{"all three", store.InternalAccountFilter{CustomerID: c1.ID, Type: "INTERNAL_FIAT", Currency: "EUR"}, pick(5)},
		{"type and currency", store.InternalAccountFilter{Type: "INTERNAL_FIAT", Currency: "USD"}, pick(1, 3)},
		{"unknown customer", store.InternalAccountFilter{CustomerID: newID("Customer")}, nil},
		{"paged", store.InternalAccountFilter{Type: "INTERNAL_FIAT", Limit: 2}, pick(1, 3)},
		{"second page", store.InternalAccountFilter{Type: "INTERNAL_FIAT", Limit: 2, Cursor: made[3].ID}, pick(5)},
		{"platform", store.InternalAccountFilter{Platform: true}, pick(3, 4)},
		{"platform and type", store.InternalAccountFilter{Platform: true, Type: "INTERNAL_FIAT"}, pick(3)},
		{"platform and currency", store.InternalAccountFilter{Platform: true, Currency: "USDC"}, pick(4)},
		{"platform ignores a customer", store.InternalAccountFilter{Platform: true, CustomerID: c1.ID}, pick(3, 4)},
		{"platform, paged", store.InternalAccountFilter{Platform: true, Limit: 1, Cursor: made[3].ID}, pick(4)},
	}
	for _, c := range cases {
		f.Run(c.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				p, err := tx.ListInternalAccounts(f.ctx, c.filter)
				if err != nil {
					return err
				}
				got := ids(p.Items, func(a *store.InternalAccount) string { return a.ID })
				if !slices.Equal(got, c.want) {
					t.Errorf("ids %v, want %v", got, c.want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	f.tx(func(tx store.Tx) error {
		p, err := tx.ListInternalAccounts(f.ctx, store.InternalAccountFilter{Type: "INTERNAL_FIAT", Limit: 2})
		if err != nil {
			return err
		}
		if !p.HasMore || p.NextCursor != made[3].ID || p.TotalCount != 3 {
			f.Errorf("first page of 2: HasMore %v NextCursor %q TotalCount %d", p.HasMore, p.NextCursor, p.TotalCount)
		}
		same(f, "listed accounts", p.Items, []store.InternalAccount{*made[1], *made[3]})
		return nil
	})
}

// ---- credentials

func testCredentialRoundTrip(f *fixture) {
	_, a, email := f.world()
	passkey := newCredential(a.ID, "PASSKEY", "YubiKey 5C")
	passkey.CredentialID = "AQIDBAUGBwgJCgsMDQ4PEA"
	passkey.FailedAttempts = 3
	passkey.LockedUntil = at(time.Hour)
	oauth := newCredential(a.ID, "OAUTH", "")
	_, other, _ := f.world()

	f.tx(func(tx store.Tx) error {
		if err := tx.CreateCredential(f.ctx, passkey); err != nil {
			return err
		}
		return tx.CreateCredential(f.ctx, oauth)
	})
	f.tx(func(tx store.Tx) error {
		for _, want := range []*store.Credential{email, passkey, oauth} {
			got, err := tx.GetCredential(f.ctx, want.ID)
			if err != nil {
				return err
			}
			same(f, "GetCredential "+want.Type, *got, *want)
		}
		list, err := tx.ListCredentials(f.ctx, a.ID)
		if err != nil {
			return err
		}
		same(f, "ListCredentials, oldest first", list, []store.Credential{*email, *passkey, *oauth})

		list, err = tx.ListCredentials(f.ctx, other.ID)
		if err != nil {
			return err
		}
		if len(list) != 1 || list[0].AccountID != other.ID {
			f.Errorf("ListCredentials of another account: %+v", list)
		}
		list, err = tx.ListCredentials(f.ctx, newID("InternalAccount"))
		if err != nil || len(list) != 0 {
			f.Errorf("ListCredentials of an unknown account: %v, %v", list, err)
		}
		return nil
	})
}

func testCredentialConflicts(f *fixture) {
	_, a, email := f.world() // a has EMAIL_OTP email.Nickname
	_, b, _ := f.world()
	c := newAccount("")
	passkeyOf := newCredential(a.ID, "PASSKEY", email.Nickname)
	oauthOf := newCredential(b.ID, "OAUTH", "shared@example.com")
	f.tx(func(tx store.Tx) error {
		if err := tx.CreateInternalAccount(f.ctx, c); err != nil {
			return err
		}
		// Not EMAIL_OTP: nicknames may repeat, and an account may have
		// several.
		for _, cr := range []*store.Credential{
			passkeyOf,
			newCredential(a.ID, "PASSKEY", email.Nickname),
			oauthOf,
		} {
			if err := tx.CreateCredential(f.ctx, cr); err != nil {
				return err
			}
		}
		return nil
	})
	cases := []struct {
		name string
		cred *store.Credential
		want error
	}{
		{"second EMAIL_OTP on one account", newCredential(a.ID, "EMAIL_OTP", "another@example.com"), store.ErrConflict},
		{"same e-mail on another account", newCredential(c.ID, "EMAIL_OTP", email.Nickname), store.ErrConflict},
		{"same e-mail in other case", newCredential(c.ID, "EMAIL_OTP", upperASCII(email.Nickname)), store.ErrConflict},
		{"e-mail used as a passkey nickname elsewhere", newCredential(c.ID, "EMAIL_OTP", "shared@example.com"), nil},
		{"PASSKEY nickname equal to an e-mail", newCredential(c.ID, "PASSKEY", email.Nickname), nil},
		{"same WebAuthn credential id on another account", sameAs(newCredential(c.ID, "PASSKEY", "x"), passkeyOf), store.ErrConflict},
		{"same OAuth identity on the same account", sameAs(newCredential(b.ID, "OAUTH", "y"), oauthOf), store.ErrConflict},
		{"same OAuth identity on another account", sameAs(newCredential(c.ID, "OAUTH", "y"), oauthOf), nil},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateCredential(f.ctx, tc.cred) })
			if tc.want == nil && err != nil {
				t.Fatalf("CreateCredential: %v", err)
			}
			if tc.want != nil {
				wantErr(t, "CreateCredential", err, tc.want)
			}
			err = f.s.Tx(f.ctx, func(tx store.Tx) error {
				_, err := tx.GetCredential(f.ctx, tc.cred.ID)
				return err
			})
			if tc.want != nil {
				wantErr(t, "the refused credential", err, store.ErrNotFound)
			} else if err != nil {
				t.Errorf("the accepted credential: %v", err)
			}
		})
	}
	f.tx(func(tx store.Tx) error {
		list, err := tx.ListCredentials(f.ctx, a.ID)
		if err != nil {
			return err
		}
		if len(list) != 3 {
			f.Errorf("account a has %d credentials, want 3", len(list))
		}
		return nil
	})
}

// sameAs copies the identity (WebAuthn credential id, OIDC issuer and
// subject) of like into c.
func sameAs(c, like *store.Credential) *store.Credential {
	c.CredentialID = like.CredentialID
	c.OIDCIssuer, c.OIDCSubject, c.OIDCAudience = like.OIDCIssuer, like.OIDCSubject, like.OIDCAudience
	return c
}

func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// testCredentialConcurrentEmail is two sign-ups racing for one e-mail
// address: exactly one wins, whatever the interleaving.
func testCredentialConcurrentEmail(f *fixture) {
	const n = 8
	accounts := make([]*store.InternalAccount, n)
	f.tx(func(tx store.Tx) error {
		for i := range accounts {
			accounts[i] = newAccount("")
			if err := tx.CreateInternalAccount(f.ctx, accounts[i]); err != nil {
				return err
			}
		}
		return nil
	})
	var won, lost atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			nick := "Race@Example.com"
			if i%2 == 1 {
				nick = "race@example.COM"
			}
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				return tx.CreateCredential(f.ctx, newCredential(accounts[i].ID, "EMAIL_OTP", nick))
			})
			switch {
			case err == nil:
				won.Add(1)
			case errors.Is(err, store.ErrConflict):
				lost.Add(1)
			default:
				f.Errorf("account %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 || lost.Load() != n-1 {
		f.Errorf("%d won and %d lost, want 1 and %d", won.Load(), lost.Load(), n-1)
	}
}

func testCredentialLock(f *fixture) {
	_, _, cr := f.world()
	steps := []struct {
		name     string
		attempts int
		until    time.Time
		now      time.Time
	}{
		{"count a failure", 1, time.Time{}, at(time.Minute)},
		{"lock", 5, at(20 * time.Minute), at(2 * time.Minute)},
		{"unlock and reset", 0, time.Time{}, at(30 * time.Minute)},
	}
	for _, s := range steps {
		f.Run(s.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				return tx.SetCredentialLock(f.ctx, cr.ID, s.attempts, s.until, s.now)
			})
			if err != nil {
				t.Fatal(err)
			}
			want := *cr
			want.FailedAttempts, want.LockedUntil, want.UpdatedAt = s.attempts, s.until, s.now
			err = f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := tx.GetCredential(f.ctx, cr.ID)
				if err != nil {
					return err
				}
				same(t, "credential after SetCredentialLock", *got, want)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// ---- OTPs

func testOTP(f *fixture) {
	_, _, cr := f.world()
	o := newOTP(cr.ID, at(time.Minute))
	f.tx(func(tx store.Tx) error { return tx.CreateOTP(f.ctx, o) })
	f.tx(func(tx store.Tx) error {
		got, err := tx.LatestOTP(f.ctx, cr.ID)
		if err != nil {
			return err
		}
		same(f, "LatestOTP", *got, *o)

		ok, err := tx.UseOTP(f.ctx, o.ID, at(2*time.Minute))
		if err != nil || !ok {
			f.Errorf("first UseOTP = %v, %v; want true", ok, err)
		}
		ok, err = tx.UseOTP(f.ctx, o.ID, at(3*time.Minute))
		if err != nil || ok {
			f.Errorf("second UseOTP = %v, %v; want false", ok, err)
		}
		return nil
	})
	f.tx(func(tx store.Tx) error {
		got, err := tx.LatestOTP(f.ctx, cr.ID)
		if err != nil {
			return err
		}
		want := *o
		want.UsedAt = at(2 * time.Minute)
		same(f, "LatestOTP returns a used issuance too", *got, want)
		return nil
	})
}

func testOTPSupersede(f *fixture) {
	_, _, cr := f.world()
	_, _, otherCred := f.world()
	used := newOTP(cr.ID, at(1*time.Minute))
	used.UsedAt = at(90 * time.Second)
	first := newOTP(cr.ID, at(2*time.Minute))
	other := newOTP(otherCred.ID, at(2*time.Minute))
	second := newOTP(cr.ID, at(3*time.Minute))
	f.tx(func(tx store.Tx) error {
		for _, o := range []*store.OTP{used, first, other} {
			if err := tx.CreateOTP(f.ctx, o); err != nil {
				return err
			}
		}
		return nil
	})
	f.tx(func(tx store.Tx) error { return tx.CreateOTP(f.ctx, second) })
	f.tx(func(tx store.Tx) error {
		latest, err := tx.LatestOTP(f.ctx, cr.ID)
		if err != nil {
			return err
		}
		same(f, "the new issuance is the latest and unused", *latest, *second)
		latest, err = tx.LatestOTP(f.ctx, otherCred.ID)
		if err != nil {
			return err
		}
		same(f, "another credential's issuance is untouched", *latest, *other)

		// The superseded issuance can no longer be used, nor can the one
		// used before.
		for _, o := range []*store.OTP{first, used} {
			ok, err := tx.UseOTP(f.ctx, o.ID, at(time.Hour))
			if err != nil || ok {
				f.Errorf("UseOTP of a superseded/used issuance = %v, %v; want false", ok, err)
			}
		}
		return nil
	})

	// Superseding is part of the issuing transaction: if that rolls back,
	// the previous issuance is still usable.
	sentinel := errors.New("mail could not be sent")
	err := f.s.Tx(f.ctx, func(tx store.Tx) error {
		if err := tx.CreateOTP(f.ctx, newOTP(cr.ID, at(4*time.Minute))); err != nil {
			return err
		}
		return sentinel
	})
	if err != sentinel { //nolint:errorlint
		f.Fatalf("Tx = %v, want the sentinel", err)
	}
	f.tx(func(tx store.Tx) error {
		ok, err := tx.UseOTP(f.ctx, second.ID, at(5*time.Minute))
		if err != nil || !ok {
			f.Errorf("UseOTP after a rolled-back re-issue = %v, %v; want true", ok, err)
		}
		latest, err := tx.LatestOTP(f.ctx, cr.ID)
		if err != nil {
			return err
		}
		want := *second
		want.UsedAt = at(5 * time.Minute)
		same(f, "latest after a rolled-back re-issue", *latest, want)
		return nil
	})
}

// ---- challenges

func testChallenge(f *fixture) {
	_, a, _ := f.world()
	bound := newChallenge(a.ID)
	bound.PublicKey = append([]byte{0x03}, bytes.Repeat([]byte{0x00, 0x7f}, 16)...)
	unbound := newChallenge(a.ID)
	consumed := newChallenge(a.ID)
	consumed.ConsumedAt = at(8 * time.Second)
	for _, c := range []*store.Challenge{bound, unbound, consumed} {
		f.tx(func(tx store.Tx) error { return tx.CreateChallenge(f.ctx, c) })
		f.tx(func(tx store.Tx) error {
			got, err := tx.GetChallenge(f.ctx, c.ID)
			if err != nil {
				return err
			}
			same(f, "GetChallenge", *got, *c)
			return nil
		})
	}
	f.tx(func(tx store.Tx) error {
		ok, err := tx.ConsumeChallenge(f.ctx, consumed.ID, at(time.Hour))
		if err != nil || ok {
			f.Errorf("ConsumeChallenge of a consumed challenge = %v, %v; want false", ok, err)
		}
		ok, err = tx.ConsumeChallenge(f.ctx, bound.ID, at(10*time.Second))
		if err != nil || !ok {
			f.Errorf("ConsumeChallenge = %v, %v; want true", ok, err)
		}
		ok, err = tx.ConsumeChallenge(f.ctx, bound.ID, at(11*time.Second))
		if err != nil || ok {
			f.Errorf("second ConsumeChallenge = %v, %v; want false", ok, err)
		}
		return nil
	})
	f.tx(func(tx store.Tx) error {
		got, err := tx.GetChallenge(f.ctx, bound.ID)
		if err != nil {
			return err
		}
		want := *bound
		want.ConsumedAt = at(10 * time.Second)
		same(f, "consumed challenge", *got, want)
		got, err = tx.GetChallenge(f.ctx, consumed.ID)
		if err != nil {
			return err
		}
		same(f, "challenge consumed before", *got, *consumed)
		return nil
	})
}

// ---- sessions

func testSession(f *fixture) {
	_, a, cr := f.world()
	s := newSession(a.ID, cr.ID, at(15*time.Minute))
	revoked := newSession(a.ID, cr.ID, at(15*time.Minute))
	revoked.RevokedAt = at(10 * time.Minute)
	for _, x := range []*store.Session{s, revoked} {
		f.tx(func(tx store.Tx) error { return tx.CreateSession(f.ctx, x) })
		f.tx(func(tx store.Tx) error {
			got, err := tx.GetSession(f.ctx, x.ID)
			if err != nil {
				return err
			}
			same(f, "GetSession", *got, *x)
			return nil
		})
	}
	f.tx(func(tx store.Tx) error {
		ok, err := tx.RevokeSession(f.ctx, s.ID, at(time.Minute))
		if err != nil || !ok {
			f.Errorf("RevokeSession = %v, %v; want true", ok, err)
		}
		ok, err = tx.RevokeSession(f.ctx, s.ID, at(2*time.Minute))
		if err != nil || ok {
			f.Errorf("second RevokeSession = %v, %v; want false", ok, err)
		}
		ok, err = tx.RevokeSession(f.ctx, revoked.ID, at(2*time.Minute))
		if err != nil || ok {
			f.Errorf("RevokeSession of a revoked session = %v, %v; want false", ok, err)
		}
		return nil
	})
	f.tx(func(tx store.Tx) error {
		got, err := tx.GetSession(f.ctx, s.ID)
		if err != nil {
			return err
		}
		if !got.RevokedAt.Equal(at(time.Minute)) {
			f.Errorf("RevokedAt %v, want %v", got.RevokedAt, at(time.Minute))
		}
		got, err = tx.GetSession(f.ctx, revoked.ID)
		if err != nil {
			return err
		}
		if !got.RevokedAt.Equal(revoked.RevokedAt) {
			f.Errorf("RevokedAt of the session revoked before changed to %v", got.RevokedAt)
		}
		return nil
	})
}

func testListActiveSessions(f *fixture) {
	_, a, cr := f.world()
	_, b, crB := f.world()
	now := at(time.Hour)
	active1 := newSession(a.ID, cr.ID, now.Add(time.Minute))
	expiring := newSession(a.ID, cr.ID, now) // expiresAt == now: expired
	justActive := newSession(a.ID, cr.ID, now.Add(time.Microsecond))
	expired := newSession(a.ID, cr.ID, now.Add(-time.Second))
	revoked := newSession(a.ID, cr.ID, now.Add(time.Hour))
	revoked.RevokedAt = now.Add(-time.Minute)
	revokedLater := newSession(a.ID, cr.ID, now.Add(time.Hour))
	otherAccount := newSession(b.ID, crB.ID, now.Add(time.Hour))
	f.tx(func(tx store.Tx) error {
		for _, s := range []*store.Session{active1, expiring, justActive, expired, revoked, revokedLater, otherAccount} {
			if err := tx.CreateSession(f.ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	f.tx(func(tx store.Tx) error {
		ok, err := tx.RevokeSession(f.ctx, revokedLater.ID, now)
		if !ok || err != nil {
			f.Errorf("RevokeSession = %v, %v", ok, err)
		}
		return nil
	})
	f.tx(func(tx store.Tx) error {
		got, err := tx.ListActiveSessions(f.ctx, a.ID, now)
		if err != nil {
			return err
		}
		same(f, "active sessions, oldest first", got, []store.Session{*active1, *justActive})

		got, err = tx.ListActiveSessions(f.ctx, a.ID, now.Add(time.Microsecond))
		if err != nil {
			return err
		}
		same(f, "a microsecond later", got, []store.Session{*active1})

		got, err = tx.ListActiveSessions(f.ctx, newID("InternalAccount"), now)
		if err != nil || len(got) != 0 {
			f.Errorf("unknown account: %v, %v", got, err)
		}
		return nil
	})
}

// ---- errors shared by all record types

func testNotFound(f *fixture) {
	_, _, cr := f.world() // a credential without OTPs
	missing := func(prefix string) string { return newID(prefix) }
	cases := []struct {
		name string
		call func(store.Tx) error
	}{
		{"GetSetting", func(tx store.Tx) error { _, err := tx.GetSetting(f.ctx, "missing"); return err }},
		{"GetCustomer", func(tx store.Tx) error { _, err := tx.GetCustomer(f.ctx, missing("Customer")); return err }},
		{"GetInternalAccount", func(tx store.Tx) error {
			_, err := tx.GetInternalAccount(f.ctx, missing("InternalAccount"))
			return err
		}},
		{"GetCredential", func(tx store.Tx) error { _, err := tx.GetCredential(f.ctx, missing("AuthMethod")); return err }},
		{"SetCredentialLock", func(tx store.Tx) error {
			return tx.SetCredentialLock(f.ctx, missing("AuthMethod"), 1, time.Time{}, at(0))
		}},
		{"LatestOTP of an unknown credential", func(tx store.Tx) error {
			_, err := tx.LatestOTP(f.ctx, missing("AuthMethod"))
			return err
		}},
		{"LatestOTP of a credential without issuances", func(tx store.Tx) error {
			_, err := tx.LatestOTP(f.ctx, cr.ID)
			return err
		}},
		{"UseOTP", func(tx store.Tx) error { _, err := tx.UseOTP(f.ctx, missing("Otp"), at(0)); return err }},
		{"GetChallenge", func(tx store.Tx) error { _, err := tx.GetChallenge(f.ctx, missing("Request")); return err }},
		{"ConsumeChallenge", func(tx store.Tx) error {
			_, err := tx.ConsumeChallenge(f.ctx, missing("Request"), at(0))
			return err
		}},
		{"GetSession", func(tx store.Tx) error { _, err := tx.GetSession(f.ctx, missing("Session")); return err }},
		{"RevokeSession", func(tx store.Tx) error { _, err := tx.RevokeSession(f.ctx, missing("Session"), at(0)); return err }},
	}
	for _, c := range cases {
		f.Run(c.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, c.call)
			wantErr(t, c.name, err, store.ErrNotFound)
		})
	}
}

// testMissingReference: a write that names a row that does not exist (an
// unknown customer, account or credential) fails with ErrNotFound and
// stores nothing.
func testMissingReference(f *fixture) {
	_, a, cr := f.world()
	acct := newAccount(newID("Customer"))
	cred := newCredential(newID("InternalAccount"), "PASSKEY", "key")
	otpCred := newID("AuthMethod")
	otp := newOTP(otpCred, at(0))
	s1 := newSession(newID("InternalAccount"), cr.ID, at(time.Hour))
	s2 := newSession(a.ID, newID("AuthMethod"), at(time.Hour))
	cases := []struct {
		name   string
		create func(store.Tx) error
		get    func(store.Tx) error
	}{
		{"internal account of an unknown customer",
			func(tx store.Tx) error { return tx.CreateInternalAccount(f.ctx, acct) },
			func(tx store.Tx) error { _, err := tx.GetInternalAccount(f.ctx, acct.ID); return err }},
		{"credential of an unknown account",
			func(tx store.Tx) error { return tx.CreateCredential(f.ctx, cred) },
			func(tx store.Tx) error { _, err := tx.GetCredential(f.ctx, cred.ID); return err }},
		{"OTP of an unknown credential",
			func(tx store.Tx) error { return tx.CreateOTP(f.ctx, otp) },
			func(tx store.Tx) error { _, err := tx.LatestOTP(f.ctx, otpCred); return err }},
		{"session of an unknown account",
			func(tx store.Tx) error { return tx.CreateSession(f.ctx, s1) },
			func(tx store.Tx) error { _, err := tx.GetSession(f.ctx, s1.ID); return err }},
		{"session of an unknown credential",
			func(tx store.Tx) error { return tx.CreateSession(f.ctx, s2) },
			func(tx store.Tx) error { _, err := tx.GetSession(f.ctx, s2.ID); return err }},
	}
	for _, c := range cases {
		f.Run(c.name, func(t *testing.T) {
			wantErr(t, "create", f.s.Tx(f.ctx, c.create), store.ErrNotFound)
			wantErr(t, "read back", f.s.Tx(f.ctx, c.get), store.ErrNotFound)
		})
	}
}

// testDuplicateID: creating a record with an id that exists is a conflict
// and leaves the existing record as it was.
func testDuplicateID(f *fixture) {
	c, a, cr := f.world()
	o := newOTP(cr.ID, at(0))
	ch := newChallenge(a.ID)
	s := newSession(a.ID, cr.ID, at(time.Hour))
	f.tx(func(tx store.Tx) error {
		if err := tx.CreateOTP(f.ctx, o); err != nil {
			return err
		}
		if err := tx.CreateChallenge(f.ctx, ch); err != nil {
			return err
		}
		return tx.CreateSession(f.ctx, s)
	})
	c2 := newCustomer()
	c2.ID = c.ID
	a2 := newAccount("")
	a2.ID = a.ID
	cr2 := newCredential(a.ID, "PASSKEY", "other")
	cr2.ID = cr.ID
	o2 := newOTP(cr.ID, at(time.Second))
	o2.ID = o.ID
	ch2 := newChallenge(a.ID)
	ch2.ID = ch.ID
	ch2.Payload = "other"
	s2 := newSession(a.ID, cr.ID, at(2*time.Hour))
	s2.ID = s.ID
	cases := []struct {
		name   string
		create func(store.Tx) error
		check  func(store.Tx) error
	}{
		{"customer", func(tx store.Tx) error { return tx.CreateCustomer(f.ctx, c2) },
			func(tx store.Tx) error { got, err := tx.GetCustomer(f.ctx, c.ID); return check(err, *got, *c) }},
		{"internal account", func(tx store.Tx) error { return tx.CreateInternalAccount(f.ctx, a2) },
			func(tx store.Tx) error { got, err := tx.GetInternalAccount(f.ctx, a.ID); return check(err, *got, *a) }},
		{"credential", func(tx store.Tx) error { return tx.CreateCredential(f.ctx, cr2) },
			func(tx store.Tx) error { got, err := tx.GetCredential(f.ctx, cr.ID); return check(err, *got, *cr) }},
		{"otp", func(tx store.Tx) error { return tx.CreateOTP(f.ctx, o2) },
			func(tx store.Tx) error { got, err := tx.LatestOTP(f.ctx, cr.ID); return check(err, *got, *o) }},
		{"challenge", func(tx store.Tx) error { return tx.CreateChallenge(f.ctx, ch2) },
			func(tx store.Tx) error { got, err := tx.GetChallenge(f.ctx, ch.ID); return check(err, *got, *ch) }},
		{"session", func(tx store.Tx) error { return tx.CreateSession(f.ctx, s2) },
			func(tx store.Tx) error { got, err := tx.GetSession(f.ctx, s.ID); return check(err, *got, *s) }},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			wantErr(t, "create with a taken id", f.s.Tx(f.ctx, tc.create), store.ErrConflict)
			if err := f.s.Tx(f.ctx, tc.check); err != nil {
				t.Error(err)
			}
		})
	}
}

// check turns a failed read or a changed record into an error; got is only
// looked at when err is nil.
func check[T any](err error, got, want T) error {
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("record changed:\n got %+v\nwant %+v", got, want)
	}
	return nil
}

// ---- concurrency

// testCASRace runs each compare-and-set method from many goroutines at
// once, each in its own transaction, on the same row: exactly one wins.
func testCASRace(f *fixture) {
	_, a, cr := f.world()
	o := newOTP(cr.ID, at(0))
	ch := newChallenge(a.ID)
	s := newSession(a.ID, cr.ID, at(time.Hour))
	f.tx(func(tx store.Tx) error {
		if err := tx.CreateOTP(f.ctx, o); err != nil {
			return err
		}
		if err := tx.CreateChallenge(f.ctx, ch); err != nil {
			return err
		}
		return tx.CreateSession(f.ctx, s)
	})
	// Goroutine i sets the time when(i), so the stored time names the winner.
	when := func(i int) time.Time { return at(time.Duration(i+1) * time.Second) }
	cases := []struct {
		name   string
		cas    func(tx store.Tx, i int) (bool, error)
		stored func(tx store.Tx) (time.Time, error)
	}{
		{"UseOTP",
			func(tx store.Tx, i int) (bool, error) { return tx.UseOTP(f.ctx, o.ID, when(i)) },
			func(tx store.Tx) (time.Time, error) {
				got, err := tx.LatestOTP(f.ctx, cr.ID)
				if err != nil {
					return time.Time{}, err
				}
				return got.UsedAt, nil
			}},
		{"ConsumeChallenge",
			func(tx store.Tx, i int) (bool, error) {
				// Read first, as the service does: check-then-set must
				// still have exactly one winner.
				if _, err := tx.GetChallenge(f.ctx, ch.ID); err != nil {
					return false, err
				}
				return tx.ConsumeChallenge(f.ctx, ch.ID, when(i))
			},
			func(tx store.Tx) (time.Time, error) {
				got, err := tx.GetChallenge(f.ctx, ch.ID)
				if err != nil {
					return time.Time{}, err
				}
				return got.ConsumedAt, nil
			}},
		{"RevokeSession",
			func(tx store.Tx, i int) (bool, error) { return tx.RevokeSession(f.ctx, s.ID, when(i)) },
			func(tx store.Tx) (time.Time, error) {
				got, err := tx.GetSession(f.ctx, s.ID)
				if err != nil {
					return time.Time{}, err
				}
				return got.RevokedAt, nil
			}},
	}
	for _, c := range cases {
		f.Run(c.name, func(t *testing.T) {
			w := race(t, f.s, f.ctx, 16, c.cas)
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := c.stored(tx)
				if err != nil {
					return err
				}
				if want := when(w); !got.Equal(want) {
					t.Errorf("stored time %v, want the winner's %v", got, want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// race runs cas from n goroutines at once, each in its own transaction of
// s, fails t unless exactly one reports a win, and returns the winner's
// index. A transaction the store retries runs cas again; the committed
// attempt's answer is the one that counts.
func race(t testing.TB, s store.Store, ctx context.Context, n int, cas func(tx store.Tx, i int) (bool, error)) int {
	t.Helper()
	var wins, winner atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			var won bool
			err := s.Tx(ctx, func(tx store.Tx) error {
				var err error
				won, err = cas(tx, i)
				return err
			})
			if err != nil {
				t.Errorf("goroutine %d: %v", i, err)
				return
			}
			if won {
				wins.Add(1)
				winner.Store(int32(i))
			}
		})
	}
	close(start)
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d goroutines won, want exactly 1", wins.Load())
	}
	return int(winner.Load())
}

// ---- transactions

func testTxRollback(f *fixture) {
	sentinel := errors.New("handler refused")
	c := newCustomer()
	a := newAccount(c.ID)
	err := f.s.Tx(f.ctx, func(tx store.Tx) error {
		if err := tx.CreateCustomer(f.ctx, c); err != nil {
			return err
		}
		if err := tx.CreateInternalAccount(f.ctx, a); err != nil {
			return err
		}
		if _, err := tx.PutSettingIfAbsent(f.ctx, "k", []byte("v")); err != nil {
			return err
		}
		// Reads in the transaction see its own writes.
		if _, err := tx.GetCustomer(f.ctx, c.ID); err != nil {
			return err
		}
		return sentinel
	})
	if err != sentinel { //nolint:errorlint // the contract is "unchanged", not "wrapped"
		f.Fatalf("Tx returned %v, want the sentinel itself", err)
	}
	f.tx(func(tx store.Tx) error {
		_, err := tx.GetCustomer(f.ctx, c.ID)
		wantErr(f, "customer of a rolled-back Tx", err, store.ErrNotFound)
		_, err = tx.GetInternalAccount(f.ctx, a.ID)
		wantErr(f, "account of a rolled-back Tx", err, store.ErrNotFound)
		_, err = tx.GetSetting(f.ctx, "k")
		wantErr(f, "setting of a rolled-back Tx", err, store.ErrNotFound)
		p, err := tx.ListCustomers(f.ctx, store.CustomerFilter{})
		if err != nil {
			return err
		}
		if p.TotalCount != 0 || len(p.Items) != 0 {
			f.Errorf("customers after rollback: %+v", p)
		}
		return nil
	})

	// A wrapped store error is returned as is, too.
	var inner error
	err = f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, inner = tx.GetCustomer(f.ctx, c.ID)
		return inner
	})
	if err != inner || !errors.Is(err, store.ErrNotFound) { //nolint:errorlint
		f.Errorf("Tx returned %v, want fn's error %v", err, inner)
	}
}

// testTxPanic: a panic in fn rolls the transaction back, propagates, and
// leaves the store usable.
func testTxPanic(f *fixture) {
	c := newCustomer()
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				f.Errorf("recovered %v, want the panic value", r)
			}
		}()
		f.s.Tx(f.ctx, func(tx store.Tx) error { //nolint:errcheck // panics
			if err := tx.CreateCustomer(f.ctx, c); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := f.s.Tx(f.ctx, func(tx store.Tx) error {
			_, err := tx.GetCustomer(f.ctx, c.ID)
			return err
		})
		wantErr(f, "customer of a panicked Tx", err, store.ErrNotFound)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		f.Fatal("the store is stuck after a panic in Tx")
	}
}

func testTxCanceled(f *fixture) {
	ctx, cancel := context.WithCancel(f.ctx)
	cancel()
	called := false
	err := f.s.Tx(ctx, func(tx store.Tx) error {
		called = true
		_, err := tx.GetCustomer(ctx, newID("Customer"))
		return err
	})
	if err == nil {
		f.Fatal("Tx with a canceled context succeeded")
	}
	if !called && !errors.Is(err, context.Canceled) {
		f.Errorf("Tx with a canceled context: %v, want context.Canceled", err)
	}
	// The store still works.
	f.tx(func(tx store.Tx) error { return tx.CreateCustomer(f.ctx, newCustomer()) })
}
