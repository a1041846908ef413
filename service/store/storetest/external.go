package storetest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"paywallet/service/store"
)

// This file checks store.ExternalAccountTx: external accounts, agents,
// device codes and agent tokens.

// ---- test data

func newExternalAccount(customerID string) *store.ExternalAccount {
	id := newID("ExternalAccount")
	fp := sha256.Sum256([]byte(id))
	return &store.ExternalAccount{
		ID:                id,
		CustomerID:        customerID,
		PlatformAccountID: "acct-" + id[len(id)-12:],
		Currency:          "USD",
		AccountType:       "USD_ACCOUNT",
		AccountInfo: []byte(`{"accountNumber":"000123456789","accountType":"USD_ACCOUNT","bankAccountType":"CHECKING",` +
			`"bankName":"Chase Bank","beneficiary":{"fullName":"Zoë Ñandú O'Brien"},"routingNumber":"021000021"}`),
		Status:                        "PENDING",
		OwnershipType:                 "FIRST_PARTY",
		BeneficiaryVerificationStatus: "PENDING",
		Fingerprint:                   fp[:],
		CreatedAt:                     at(10 * time.Second),
		UpdatedAt:                     at(11 * time.Second),
	}
}

func newAgent(customerID string) *store.Agent {
	return &store.Agent{
		ID:         newID("Agent"),
		CustomerID: customerID,
		Name:       "Budget helper ✓",
		Policy: []byte(`{"defaultExecutionMode":"APPROVAL_REQUIRED","permissions":["VIEW_TRANSACTIONS","CREATE_QUOTES"],` +
			`"spendingLimits":{"currency":"USD","dailyLimit":null,"perTransactionLimit":10000}}`),
		CreatedAt: at(12 * time.Second),
		UpdatedAt: at(13 * time.Second),
	}
}

// newDeviceCode makes a code valid for ten minutes from created.
func newDeviceCode(agentID string, created time.Time) *store.DeviceCode {
	return &store.DeviceCode{
		Code:      fmt.Sprintf("AGENT-%X", idSeq.Add(1)),
		AgentID:   agentID,
		CreatedAt: created,
		ExpiresAt: created.Add(10 * time.Minute),
	}
}

func newAgentToken(agentID string) *store.AgentToken {
	h := sha256.Sum256([]byte(newID("Token")))
	return &store.AgentToken{TokenHash: h[:], AgentID: agentID, CreatedAt: at(14 * time.Second)}
}

// sub is the fixture for a subtest of f, whose helpers fail t rather than f.
func (f *fixture) sub(t *testing.T) *fixture { return &fixture{T: t, s: f.s, ctx: f.ctx, open: f.open} }

// customers creates n customers.
func (f *fixture) customers(n int) []*store.Customer {
	f.Helper()
	cs := make([]*store.Customer, n)
	f.tx(func(tx store.Tx) error {
		for i := range cs {
			cs[i] = newCustomer()
			if err := tx.CreateCustomer(f.ctx, cs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return cs
}

// agent creates a customer and an agent of it.
func (f *fixture) agent() *store.Agent {
	f.Helper()
	a := newAgent(f.customers(1)[0].ID)
	f.tx(func(tx store.Tx) error { return tx.CreateAgent(f.ctx, a) })
	return a
}

// externalAccounts lists all accounts of one owner ("" for the platform).
func externalAccounts(tx store.Tx, t testing.TB, customerID string) []store.ExternalAccount {
	t.Helper()
	var all []store.ExternalAccount
	cursor := ""
	for {
		p, err := tx.ListExternalAccounts(t.Context(), store.ExternalAccountFilter{
			CustomerID: customerID, Platform: customerID == "", Limit: 100, Cursor: cursor})
		if err != nil {
			t.Fatalf("ListExternalAccounts: %v", err)
		}
		all = append(all, p.Items...)
		if !p.HasMore {
			return all
		}
		cursor = p.NextCursor
	}
}

// defaults is the ids of the owner's accounts that have the default flag.
func defaults(tx store.Tx, t testing.TB, customerID string) []string {
	t.Helper()
	var out []string
	for _, a := range externalAccounts(tx, t, customerID) {
		if a.DefaultUmaDepositAccount {
			out = append(out, a.ID)
		}
	}
	return out
}

func externalIDs(as []store.ExternalAccount) []string {
	return ids(as, func(a *store.ExternalAccount) string { return a.ID })
}

// ---- external accounts

func testExternalAccountRoundTrip(f *fixture) {
	c := f.customers(1)[0]

	full := newExternalAccount(c.ID)
	full.DefaultUmaDepositAccount = true
	full.BeneficiaryVerificationStatus = "MATCHED"
	full.BeneficiaryVerifiedData = []byte(`{"fullName":"Zoë Ñandú O'Brien"}`)
	// Documents are bytes: NUL, invalid UTF-8 and whitespace come back
	// as they went in.
	raw := newExternalAccount(c.ID)
	raw.AccountInfo = []byte{'{', 0x00, 0xff, 0xfe, '"', '}', ' ', '\n', 0x00}
	raw.BeneficiaryVerifiedData = []byte{0x00}
	raw.Fingerprint = []byte{0x00, 0x00, 0xff}
	nilDocs := newExternalAccount(c.ID)
	nilDocs.AccountInfo, nilDocs.BeneficiaryVerifiedData = nil, nil
	emptyDocs := newExternalAccount(c.ID)
	emptyDocs.AccountInfo, emptyDocs.BeneficiaryVerifiedData = []byte{}, []byte{}
	// A platform account: no customer, empty optional strings.
	platform := newExternalAccount("")
	platform.PlatformAccountID, platform.OwnershipType, platform.BeneficiaryVerificationStatus = "", "", ""
	platform.Currency, platform.AccountType = "BTC", "SPARK_WALLET"
	platformDefault := newExternalAccount("")
	platformDefault.DefaultUmaDepositAccount = true
	platformDefault.Status = "ACTIVE"
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	odd := newExternalAccount(c.ID)
	odd.CreatedAt = time.Date(1969, 12, 31, 23, 59, 59, 999_999_999, zone)
	odd.UpdatedAt = time.Date(2100, 1, 1, 0, 0, 0, 1_999, zone)
	oddWant := *odd
	oddWant.CreatedAt = odd.CreatedAt.UTC().Truncate(time.Microsecond)
	oddWant.UpdatedAt = odd.UpdatedAt.UTC().Truncate(time.Microsecond)

	cases := []struct {
		name     string
		in, want *store.ExternalAccount
	}{
		{"all fields, default", full, full},
		{"documents with NUL and invalid UTF-8", raw, raw},
		{"nil documents", nilDocs, nilDocs},
		{"empty documents are not nil", emptyDocs, emptyDocs},
		{"platform account", platform, platform},
		{"platform default", platformDefault, platformDefault},
		{"times normalised to UTC microseconds", odd, &oddWant},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			in := *tc.in
			err := f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateExternalAccount(f.ctx, tc.in) })
			if err != nil {
				t.Fatalf("CreateExternalAccount: %v", err)
			}
			same(t, "the argument is not modified", *tc.in, in)
			err = f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := tx.GetExternalAccount(f.ctx, tc.in.ID)
				if err != nil {
					return err
				}
				same(t, "GetExternalAccount", *got, *tc.want)
				if got.CreatedAt.Location() != time.UTC || got.UpdatedAt.Location() != time.UTC {
					t.Errorf("times in %v and %v, want UTC", got.CreatedAt.Location(), got.UpdatedAt.Location())
				}
				// A list returns the same record.
				for _, a := range externalAccounts(tx, t, tc.in.CustomerID) {
					if a.ID == tc.in.ID {
						same(t, "listed account", a, *tc.want)
						return nil
					}
				}
				t.Errorf("account not in its owner's list")
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// testExternalAccountConflict: an owner (customer, or the platform) has a
// fingerprint once; another owner may have it too. A refused create stores
// nothing and moves no default flag, even when the caller commits anyway.
func testExternalAccountConflict(f *fixture) {
	cs := f.customers(2)
	c1, c2 := cs[0], cs[1]
	first := newExternalAccount(c1.ID)
	first.DefaultUmaDepositAccount = true
	plat := newExternalAccount("")
	plat.DefaultUmaDepositAccount = true
	f.tx(func(tx store.Tx) error {
		if err := tx.CreateExternalAccount(f.ctx, first); err != nil {
			return err
		}
		return tx.CreateExternalAccount(f.ctx, plat)
	})
	dup := func(of *store.ExternalAccount, customerID string, isDefault bool) *store.ExternalAccount {
		a := newExternalAccount(customerID)
		a.Fingerprint = slices.Clone(of.Fingerprint)
		a.DefaultUmaDepositAccount = isDefault
		a.CreatedAt, a.UpdatedAt = at(time.Hour), at(time.Hour)
		return a
	}
	takenID := newExternalAccount(c1.ID)
	takenID.ID = first.ID
	takenID.DefaultUmaDepositAccount = true
	otherCase := dup(first, c1.ID, false)
	otherCase.Fingerprint[0] ^= 0x20 // differs from first's in one bit only

	cases := []struct {
		name string
		acct *store.ExternalAccount
		want error
	}{
		{"same fingerprint, same customer", dup(first, c1.ID, false), store.ErrConflict},
		{"same fingerprint, same customer, as the new default", dup(first, c1.ID, true), store.ErrConflict},
		{"taken id, as the new default", takenID, store.ErrConflict},
		{"same fingerprint, platform, as the new default", dup(plat, "", true), store.ErrConflict},
		{"fingerprint one bit apart", otherCase, nil},
		{"same fingerprint, another customer", dup(first, c2.ID, false), nil},
		{"customer's fingerprint for the platform", dup(first, "", false), nil},
		{"platform's fingerprint for a customer", dup(plat, c1.ID, false), nil},
		{"same fingerprint, another customer, again", dup(first, c2.ID, false), store.ErrConflict},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				err := tx.CreateExternalAccount(f.ctx, tc.acct)
				if tc.want == nil {
					return err
				}
				wantErr(t, "CreateExternalAccount", err, tc.want)
				return nil // commit what the refused create may have done
			})
			if err != nil {
				t.Fatal(err)
			}
			err = f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := tx.GetExternalAccount(f.ctx, tc.acct.ID)
				switch {
				case tc.want == nil:
					if err != nil {
						return err
					}
					same(t, "the accepted account", *got, *tc.acct)
				case tc.acct == takenID:
					if err != nil {
						return err
					}
					same(t, "the account whose id was taken", *got, *first)
				default:
					wantErr(t, "the refused account", err, store.ErrNotFound)
				}
				for _, o := range []*store.ExternalAccount{first, plat} {
					got, err := tx.GetExternalAccount(f.ctx, o.ID)
					if err != nil {
						return err
					}
					same(t, "the earlier account is untouched", *got, *o)
				}
				same(t, "defaults of the customer", defaults(tx, t, c1.ID), []string{first.ID})
				same(t, "defaults of the platform", defaults(tx, t, ""), []string{plat.ID})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	f.tx(func(tx store.Tx) error {
		same(f, "accounts of the first customer", len(externalAccounts(tx, f, c1.ID)), 3)
		same(f, "accounts of the second customer", len(externalAccounts(tx, f, c2.ID)), 1)
		same(f, "accounts of the platform", len(externalAccounts(tx, f, "")), 2)
		return nil
	})
}

// testExternalAccountDefault: creating a default moves the flag from the
// owner's previous default (whose UpdatedAt becomes the new account's
// CreatedAt); owners do not affect each other; a rolled-back create moves
// nothing.
func testExternalAccountDefault(f *fixture) {
	cs := f.customers(2)
	c1, c2 := cs[0].ID, cs[1].ID
	mk := func(owner string, isDefault bool, minute int) *store.ExternalAccount {
		a := newExternalAccount(owner)
		a.DefaultUmaDepositAccount = isDefault
		a.CreatedAt, a.UpdatedAt = at(time.Duration(minute)*time.Minute), at(time.Duration(minute)*time.Minute)
		return a
	}
	a1, b1, p1 := mk(c1, true, 1), mk(c2, true, 1), mk("", true, 1)
	a2, a3, a4 := mk(c1, false, 2), mk(c1, true, 3), mk(c1, true, 4)
	b2, p2 := mk(c2, false, 5), mk("", true, 6)
	// want[account] is the record expected after each step; updated as
	// flags move.
	want := map[string]store.ExternalAccount{}
	var order []string
	steps := []struct {
		name     string
		acct     *store.ExternalAccount
		rollback bool
		loser    *store.ExternalAccount // loses the flag
		defaults map[string][]string    // owner → default ids afterwards
	}{
		{"first default of a customer", a1, false, nil, map[string][]string{c1: {a1.ID}, c2: nil, "": nil}},
		{"first default of another customer", b1, false, nil, map[string][]string{c1: {a1.ID}, c2: {b1.ID}, "": nil}},
		{"first default of the platform", p1, false, nil, map[string][]string{c1: {a1.ID}, c2: {b1.ID}, "": {p1.ID}}},
		{"an account that is not the default", a2, false, nil, map[string][]string{c1: {a1.ID}, c2: {b1.ID}, "": {p1.ID}}},
		{"a second default moves the flag", a3, false, a1, map[string][]string{c1: {a3.ID}, c2: {b1.ID}, "": {p1.ID}}},
		{"a rolled-back default moves nothing", a4, true, nil, map[string][]string{c1: {a3.ID}, c2: {b1.ID}, "": {p1.ID}}},
		{"non-default of another customer", b2, false, nil, map[string][]string{c1: {a3.ID}, c2: {b1.ID}, "": {p1.ID}}},
		{"a second platform default", p2, false, p1, map[string][]string{c1: {a3.ID}, c2: {b1.ID}, "": {p2.ID}}},
	}
	sentinel := errors.New("handler refused")
	for _, s := range steps {
		f.Run(s.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				if err := tx.CreateExternalAccount(f.ctx, s.acct); err != nil {
					return err
				}
				if s.rollback {
					return sentinel
				}
				return nil
			})
			if s.rollback {
				if err != sentinel { //nolint:errorlint
					t.Fatalf("Tx = %v, want the sentinel", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				want[s.acct.ID] = *s.acct
				order = append(order, s.acct.ID)
			}
			if s.loser != nil {
				w := want[s.loser.ID]
				w.DefaultUmaDepositAccount = false
				w.UpdatedAt = s.acct.CreatedAt
				want[s.loser.ID] = w
			}
			err = f.s.Tx(f.ctx, func(tx store.Tx) error {
				for owner, ids := range s.defaults {
					same(t, fmt.Sprintf("defaults of owner %q", owner), defaults(tx, t, owner), ids)
				}
				for _, id := range order {
					got, err := tx.GetExternalAccount(f.ctx, id)
					if err != nil {
						return err
					}
					same(t, "account "+id, *got, want[id])
				}
				if s.rollback {
					_, err := tx.GetExternalAccount(f.ctx, s.acct.ID)
					wantErr(t, "the rolled-back account", err, store.ErrNotFound)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// testExternalAccountDefaultRace: concurrent creates of default accounts for
// one customer all succeed and leave exactly one default.
func testExternalAccountDefaultRace(f *fixture) {
	cs := f.customers(2)
	const n = 16
	accts := make([]*store.ExternalAccount, n)
	for i := range accts {
		accts[i] = newExternalAccount(cs[0].ID)
		accts[i].DefaultUmaDepositAccount = true
		accts[i].CreatedAt = at(time.Duration(i+1) * time.Second)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				// Read first, as the service does.
				if _, err := tx.GetCustomer(f.ctx, cs[0].ID); err != nil {
					return err
				}
				if _, err := tx.ListExternalAccounts(f.ctx, store.ExternalAccountFilter{CustomerID: cs[0].ID}); err != nil {
					return err
				}
				return tx.CreateExternalAccount(f.ctx, accts[i])
			})
			if err != nil {
				f.Errorf("goroutine %d: %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	f.tx(func(tx store.Tx) error {
		all := externalAccounts(tx, f, cs[0].ID)
		if len(all) != n {
			f.Errorf("%d accounts, want %d", len(all), n)
		}
		if d := defaults(tx, f, cs[0].ID); len(d) != 1 {
			f.Errorf("defaults %v, want exactly one", d)
		}
		if d := defaults(tx, f, cs[1].ID); len(d) != 0 {
			f.Errorf("another customer has defaults %v", d)
		}
		return nil
	})
}

func testExternalAccountList(f *fixture) {
	cs := f.customers(2)
	c1, c2 := cs[0].ID, cs[1].ID
	spec := []struct{ customer, currency string }{
		{c1, "USD"}, // 0
		{c1, "EUR"}, // 1
		{c2, "USD"}, // 2
		{"", "USD"}, // 3
		{"", "BTC"}, // 4
		{c1, "USD"}, // 5
		{c1, "BTC"}, // 6
	}
	var made []*store.ExternalAccount
	f.tx(func(tx store.Tx) error {
		for _, s := range spec {
			a := newExternalAccount(s.customer)
			a.Currency = s.currency
			if err := tx.CreateExternalAccount(f.ctx, a); err != nil {
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
	type F = store.ExternalAccountFilter
	cases := []struct {
		name       string
		filter     F
		want       []string
		wantMore   bool
		wantCursor string
		wantTotal  int
	}{
		{"customer", F{CustomerID: c1}, pick(0, 1, 5, 6), false, "", 4},
		{"customer and currency", F{CustomerID: c1, Currency: "USD"}, pick(0, 5), false, "", 2},
		{"currency the customer lacks", F{CustomerID: c1, Currency: "MXN"}, nil, false, "", 0},
		{"another customer", F{CustomerID: c2}, pick(2), false, "", 1},
		{"unknown customer", F{CustomerID: newID("Customer")}, nil, false, "", 0},
		{"platform", F{Platform: true}, pick(3, 4), false, "", 2},
		{"platform and currency", F{Platform: true, Currency: "BTC"}, pick(4), false, "", 1},
		{"all customers", F{AllCustomers: true}, pick(0, 1, 2, 5, 6), false, "", 5},
		{"all customers and currency", F{AllCustomers: true, Currency: "USD"}, pick(0, 2, 5), false, "", 3},
		{"all customers, first page", F{AllCustomers: true, Limit: 2}, pick(0, 1), true, made[1].ID, 5},
		{"all customers, next page", F{AllCustomers: true, Limit: 2, Cursor: made[1].ID}, pick(2, 5), true, made[5].ID, 5},
		{"first page", F{CustomerID: c1, Limit: 2}, pick(0, 1), true, made[1].ID, 4},
		{"second page", F{CustomerID: c1, Limit: 2, Cursor: made[1].ID}, pick(5, 6), false, "", 4},
		{"page with a filter", F{CustomerID: c1, Currency: "USD", Limit: 1}, pick(0), true, made[0].ID, 2},
		{"next page with a filter", F{CustomerID: c1, Currency: "USD", Limit: 1, Cursor: made[0].ID}, pick(5), false, "", 2},
		{"cursor after the last", F{CustomerID: c1, Cursor: made[6].ID}, nil, false, "", 4},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				p, err := tx.ListExternalAccounts(f.ctx, tc.filter)
				if err != nil {
					return err
				}
				if got := externalIDs(p.Items); !slices.Equal(got, tc.want) {
					t.Errorf("ids %v, want %v", got, tc.want)
				}
				if p.Items == nil {
					t.Errorf("Items is nil, want an empty list")
				}
				if p.HasMore != tc.wantMore || p.NextCursor != tc.wantCursor || p.TotalCount != tc.wantTotal {
					t.Errorf("HasMore %v NextCursor %q TotalCount %d, want %v %q %d",
						p.HasMore, p.NextCursor, p.TotalCount, tc.wantMore, tc.wantCursor, tc.wantTotal)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	scopes := []struct {
		name   string
		filter F
	}{
		{"no scope", F{}},
		{"no scope, currency only", F{Currency: "USD"}},
		{"both scopes", F{CustomerID: c1, Platform: true}},
		{"customer and all customers", F{CustomerID: c1, AllCustomers: true}},
		{"platform and all customers", F{Platform: true, AllCustomers: true}},
	}
	for _, tc := range scopes {
		f.Run(tc.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				p, err := tx.ListExternalAccounts(f.ctx, tc.filter)
				if err == nil || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
					t.Errorf("ListExternalAccounts = %d items, %v; want a plain error", len(p.Items), err)
				}
				// The transaction is still usable.
				_, err = tx.ListExternalAccounts(f.ctx, F{CustomerID: c1})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	f.tx(func(tx store.Tx) error {
		p, err := tx.ListExternalAccounts(f.ctx, F{CustomerID: c1, Currency: "USD"})
		if err != nil {
			return err
		}
		same(f, "listed accounts", p.Items, []store.ExternalAccount{*made[0], *made[5]})
		return nil
	})
}

// testExternalAccountPaginationStable walks a filtered list while matching
// and non-matching rows are inserted between pages (see
// testPaginationStable).
func testExternalAccountPaginationStable(f *fixture) {
	cs := f.customers(2)
	c1, c2 := cs[0].ID, cs[1].ID
	mk := func(customer, currency string) *store.ExternalAccount {
		a := newExternalAccount(customer)
		a.Currency = currency
		return a
	}
	var original []string
	f.tx(func(tx store.Tx) error {
		for i := range 10 {
			a := mk(c1, "USD")
			if err := tx.CreateExternalAccount(f.ctx, a); err != nil {
				return err
			}
			original = append(original, a.ID)
			for _, noise := range []*store.ExternalAccount{mk(c1, "EUR"), mk(c2, "USD"), mk("", "USD")} {
				if i%3 == 0 {
					if err := tx.CreateExternalAccount(f.ctx, noise); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	filter := store.ExternalAccountFilter{CustomerID: c1, Currency: "USD", Limit: 3}
	var seen, added []string
	for page := 0; ; page++ {
		if page > 20 {
			f.Fatal("pagination does not end")
		}
		var p store.Page[store.ExternalAccount]
		f.tx(func(tx store.Tx) (err error) {
			p, err = tx.ListExternalAccounts(f.ctx, filter)
			return err
		})
		seen = append(seen, externalIDs(p.Items)...)
		if p.TotalCount != len(original)+2*page {
			f.Errorf("page %d: TotalCount %d, want %d", page, p.TotalCount, len(original)+2*page)
		}
		if !p.HasMore {
			if p.NextCursor != "" {
				f.Errorf("last page has NextCursor %q", p.NextCursor)
			}
			break
		}
		filter.Cursor = p.NextCursor
		newer := mk(c1, "USD")
		older := mk(c1, "USD")
		older.ID = lowID("ExternalAccount", uint64(page+1))
		f.tx(func(tx store.Tx) error {
			for _, a := range []*store.ExternalAccount{newer, older, mk(c1, "EUR"), mk(c2, "USD"), mk("", "USD")} {
				if err := tx.CreateExternalAccount(f.ctx, a); err != nil {
					return err
				}
			}
			return nil
		})
		added = append(added, newer.ID)
	}
	want := append(slices.Clone(original), added...)
	if !slices.Equal(seen, want) {
		f.Errorf("pages returned\n%v\nwant\n%v", seen, want)
	}
}

func testPendingExternalAccounts(f *fixture) {
	c := f.customers(1)[0]
	mk := func(customer, status string, created time.Duration) *store.ExternalAccount {
		a := newExternalAccount(customer)
		a.Status, a.CreatedAt = status, at(created)
		a.BeneficiaryVerificationStatus = "" // not looked at by a verifier yet
		return a
	}
	// Ids are in creation order; CreatedAt deliberately is not.
	p1 := mk(c.ID, "PENDING", 5*time.Minute)
	p2 := mk(c.ID, "PENDING", time.Minute)
	active := mk(c.ID, "ACTIVE", 0)
	p3 := mk(c.ID, "PENDING", time.Minute) // same time as p2, later id
	plat := mk("", "PENDING", 3*time.Minute)
	review := mk(c.ID, "UNDER_REVIEW", 2*time.Minute)
	inactive := mk("", "INACTIVE", 0)
	f.tx(func(tx store.Tx) error {
		for _, a := range []*store.ExternalAccount{p1, p2, active, p3, plat, review, inactive} {
			if err := tx.CreateExternalAccount(f.ctx, a); err != nil {
				return err
			}
		}
		return nil
	})
	all := []store.ExternalAccount{*p2, *p3, *plat, *p1}
	cases := []struct {
		name  string
		limit int
		want  []store.ExternalAccount
	}{
		{"limit 1", 1, all[:1]},
		{"limit 2, tie broken by id", 2, all[:2]},
		{"limit equal to the number", 4, all},
		{"limit above the number", 100, all},
		{"limit 0", 0, []store.ExternalAccount{}},
		{"negative limit", -1, []store.ExternalAccount{}},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := tx.PendingExternalAccounts(f.ctx, tc.limit)
				if err != nil {
					return err
				}
				same(t, "PendingExternalAccounts", got, tc.want)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	// A verified account leaves the queue.
	f.tx(func(tx store.Tx) error {
		return tx.UpdateExternalAccountStatus(f.ctx, p2.ID,
			store.ExternalAccountStatusUpdate{Status: "ACTIVE", BeneficiaryVerificationStatus: "MATCHED"}, at(time.Hour))
	})
	f.tx(func(tx store.Tx) error {
		got, err := tx.PendingExternalAccounts(f.ctx, 10)
		if err != nil {
			return err
		}
		same(f, "pending after one was verified", externalIDs(got), []string{p3.ID, plat.ID, p1.ID})
		return nil
	})
	// An account whose verification is still pending stays PENDING but
	// leaves the queue.
	f.tx(func(tx store.Tx) error {
		return tx.UpdateExternalAccountStatus(f.ctx, p3.ID,
			store.ExternalAccountStatusUpdate{Status: "PENDING", BeneficiaryVerificationStatus: "PENDING"}, at(time.Hour))
	})
	f.tx(func(tx store.Tx) error {
		got, err := tx.PendingExternalAccounts(f.ctx, 10)
		if err != nil {
			return err
		}
		same(f, "pending after one went to slow verification", externalIDs(got), []string{plat.ID, p1.ID})
		return nil
	})
}

func testUpdateExternalAccountStatus(f *fixture) {
	c := f.customers(1)[0]
	a := newExternalAccount(c.ID)
	a.DefaultUmaDepositAccount = true
	bystander := newExternalAccount(c.ID)
	f.tx(func(tx store.Tx) error {
		if err := tx.CreateExternalAccount(f.ctx, a); err != nil {
			return err
		}
		return tx.CreateExternalAccount(f.ctx, bystander)
	})
	steps := []struct {
		name string
		u    store.ExternalAccountStatusUpdate
		at   time.Time
	}{
		{"verified with data", store.ExternalAccountStatusUpdate{Status: "ACTIVE", BeneficiaryVerificationStatus: "PARTIAL_MATCH",
			BeneficiaryVerifiedData: []byte(`{"fullName":"Zoe Nandu O'Brien"}`)}, at(time.Hour)},
		{"under review, data cleared", store.ExternalAccountStatusUpdate{Status: "UNDER_REVIEW", BeneficiaryVerificationStatus: "PENDING"},
			at(2 * time.Hour)},
		{"empty data is kept apart from none", store.ExternalAccountStatusUpdate{Status: "INACTIVE", BeneficiaryVerificationStatus: "NOT_MATCHED",
			BeneficiaryVerifiedData: []byte{}}, at(3 * time.Hour)},
		{"data with NUL, empty verification status", store.ExternalAccountStatusUpdate{Status: "ACTIVE",
			BeneficiaryVerifiedData: []byte{0x00, 0xff}}, at(4 * time.Hour)},
	}
	isDefault := true // until the account is made INACTIVE, for good
	for _, s := range steps {
		f.Run(s.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				return tx.UpdateExternalAccountStatus(f.ctx, a.ID, s.u, s.at)
			})
			if err != nil {
				t.Fatal(err)
			}
			if s.u.Status == "INACTIVE" {
				isDefault = false
			}
			want := *a
			want.DefaultUmaDepositAccount = isDefault
			want.Status, want.BeneficiaryVerificationStatus = s.u.Status, s.u.BeneficiaryVerificationStatus
			want.BeneficiaryVerifiedData, want.UpdatedAt = s.u.BeneficiaryVerifiedData, s.at
			err = f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := tx.GetExternalAccount(f.ctx, a.ID)
				if err != nil {
					return err
				}
				same(t, "after UpdateExternalAccountStatus", *got, want)
				got, err = tx.GetExternalAccount(f.ctx, bystander.ID)
				if err != nil {
					return err
				}
				same(t, "another account", *got, *bystander)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// ---- agents

func testAgent(f *fixture) {
	c := f.customers(1)[0]
	full := newAgent(c.ID)
	paused := newAgent(c.ID)
	paused.IsPaused = true
	paused.Policy = nil
	empty := newAgent(c.ID)
	empty.Name, empty.Policy = "", []byte{}
	for _, a := range []*store.Agent{full, paused, empty} {
		f.tx(func(tx store.Tx) error { return tx.CreateAgent(f.ctx, a) })
		f.tx(func(tx store.Tx) error {
			got, err := tx.GetAgent(f.ctx, a.ID)
			if err != nil {
				return err
			}
			same(f, "GetAgent", *got, *a)
			return nil
		})
	}
	steps := []struct {
		name   string
		paused bool
		at     time.Time
	}{
		{"pause", true, at(time.Hour)},
		{"pause again", true, at(2 * time.Hour)},
		{"resume", false, at(3 * time.Hour)},
	}
	for _, s := range steps {
		f.Run(s.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.SetAgentPaused(f.ctx, full.ID, s.paused, s.at) })
			if err != nil {
				t.Fatal(err)
			}
			want := *full
			want.IsPaused, want.UpdatedAt = s.paused, s.at
			err = f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := tx.GetAgent(f.ctx, full.ID)
				if err != nil {
					return err
				}
				same(t, "agent", *got, want)
				got, err = tx.GetAgent(f.ctx, paused.ID)
				if err != nil {
					return err
				}
				same(t, "another agent", *got, *paused)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	// A taken id is a conflict and changes nothing.
	again := newAgent(c.ID)
	again.ID = paused.ID
	wantErr(f, "CreateAgent with a taken id", f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateAgent(f.ctx, again) }),
		store.ErrConflict)
	f.tx(func(tx store.Tx) error {
		got, err := tx.GetAgent(f.ctx, paused.ID)
		return check(err, *got, *paused)
	})
}

// ---- device codes

func testDeviceCode(f *fixture) {
	ag, other := f.agent(), f.agent()
	expired := newDeviceCode(ag.ID, at(-20*time.Minute)) // expires at -10m
	redeemed := newDeviceCode(ag.ID, at(-5*time.Minute))
	redeemed.RedeemedAt = at(-4 * time.Minute)
	old := newDeviceCode(ag.ID, at(0))
	otherCode := newDeviceCode(other.ID, at(0))
	for _, d := range []*store.DeviceCode{expired, redeemed, old, otherCode} {
		f.tx(func(tx store.Tx) error { return tx.CreateDeviceCode(f.ctx, d) })
	}
	want := map[*store.DeviceCode]store.DeviceCode{}
	for _, d := range []*store.DeviceCode{expired, redeemed, old, otherCode} {
		want[d] = *d // nothing ended yet: each was created after the others expired or were redeemed
	}
	checkAll := func(f *fixture) {
		f.Helper()
		f.tx(func(tx store.Tx) error {
			for d, w := range want {
				got, err := tx.GetDeviceCode(f.ctx, d.Code)
				if err != nil {
					return err
				}
				same(f, "device code "+d.Code, *got, w)
			}
			return nil
		})
	}
	checkAll(f)

	// A new code ends the unredeemed, unexpired one of the same agent.
	newer := newDeviceCode(ag.ID, at(time.Minute))
	f.tx(func(tx store.Tx) error { return tx.CreateDeviceCode(f.ctx, newer) })
	w := want[old]
	w.ExpiresAt = newer.CreatedAt
	want[old] = w
	want[newer] = *newer
	checkAll(f)

	// A refused code (taken) ends nothing, even if the caller commits.
	taken := newDeviceCode(ag.ID, at(70*time.Second))
	taken.Code = old.Code
	f.tx(func(tx store.Tx) error {
		wantErr(f, "CreateDeviceCode with a taken code", tx.CreateDeviceCode(f.ctx, taken), store.ErrConflict)
		return nil
	})
	checkAll(f)

	redeemAt := at(90 * time.Second)
	cases := []struct {
		name string
		code *store.DeviceCode
		won  bool
	}{
		{"the ended code", old, false},
		{"an expired code", expired, false},
		{"a redeemed code", redeemed, false},
		{"the newest code", newer, true},
		{"the newest code again", newer, false},
		{"another agent's code", otherCode, true},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			var won bool
			err := f.s.Tx(f.ctx, func(tx store.Tx) (err error) {
				won, err = tx.RedeemDeviceCode(f.ctx, tc.code.Code, redeemAt)
				return err
			})
			if err != nil || won != tc.won {
				t.Errorf("RedeemDeviceCode = %v, %v; want %v", won, err, tc.won)
			}
			if won {
				w := want[tc.code]
				w.RedeemedAt = redeemAt
				want[tc.code] = w
			}
			checkAll(f.sub(t))
		})
	}
}

// testDeviceCodeExpiry: a code is expired from its ExpiresAt on.
func testDeviceCodeExpiry(f *fixture) {
	cases := []struct {
		name  string
		after time.Duration // redeem at ExpiresAt + after
		won   bool
	}{
		{"a microsecond before expiry", -time.Microsecond, true},
		{"at expiry", 0, false},
		{"a microsecond after expiry", time.Microsecond, false},
		{"long after", time.Hour, false},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			f := f.sub(t)
			d := newDeviceCode(f.agent().ID, at(0))
			f.tx(func(tx store.Tx) error { return tx.CreateDeviceCode(f.ctx, d) })
			when := d.ExpiresAt.Add(tc.after)
			var won bool
			err := f.s.Tx(f.ctx, func(tx store.Tx) (err error) {
				won, err = tx.RedeemDeviceCode(f.ctx, d.Code, when)
				return err
			})
			if err != nil || won != tc.won {
				t.Errorf("RedeemDeviceCode = %v, %v; want %v", won, err, tc.won)
			}
			want := *d
			if tc.won {
				want.RedeemedAt = when
			}
			f.tx(func(tx store.Tx) error {
				got, err := tx.GetDeviceCode(f.ctx, d.Code)
				return check(err, *got, want)
			})
		})
	}
}

// testDeviceCodeRace: goroutines redeeming one code at once, each in its
// own transaction, have exactly one winner.
func testDeviceCodeRace(f *fixture) {
	d := newDeviceCode(f.agent().ID, at(0))
	f.tx(func(tx store.Tx) error { return tx.CreateDeviceCode(f.ctx, d) })
	when := func(i int) time.Time { return at(time.Duration(i+1) * time.Second) }
	const n = 16
	var wins, winner atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			var won bool
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				// Read first, as the service does.
				if _, err := tx.GetDeviceCode(f.ctx, d.Code); err != nil {
					return err
				}
				var err error
				won, err = tx.RedeemDeviceCode(f.ctx, d.Code, when(i))
				return err
			})
			if err != nil {
				f.Errorf("goroutine %d: %v", i, err)
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
		f.Fatalf("%d goroutines won, want exactly 1", wins.Load())
	}
	f.tx(func(tx store.Tx) error {
		got, err := tx.GetDeviceCode(f.ctx, d.Code)
		if err != nil {
			return err
		}
		if want := when(int(winner.Load())); !got.RedeemedAt.Equal(want) {
			f.Errorf("RedeemedAt %v, want the winner's %v", got.RedeemedAt, want)
		}
		return nil
	})
}

// ---- agent tokens

func testAgentToken(f *fixture) {
	ag, other := f.agent(), f.agent()
	tok := newAgentToken(ag.ID)
	second := newAgentToken(ag.ID)
	revoked := newAgentToken(ag.ID)
	revoked.RevokedAt = at(time.Minute)
	otherTok := newAgentToken(other.ID)
	f.tx(func(tx store.Tx) error {
		for _, k := range []*store.AgentToken{tok, second, revoked, otherTok} {
			if err := tx.CreateAgentToken(f.ctx, k); err != nil {
				return err
			}
		}
		return nil
	})
	unknown := sha256.Sum256([]byte("not a token"))
	cases := []struct {
		name string
		hash []byte
		want *store.Agent // nil: ErrNotFound
	}{
		{"token", tok.TokenHash, ag},
		{"second token of the agent", second.TokenHash, ag},
		{"another agent's token", otherTok.TokenHash, other},
		{"revoked token", revoked.TokenHash, nil},
		{"unknown hash", unknown[:], nil},
		{"prefix of a hash", tok.TokenHash[:16], nil},
		{"nil hash", nil, nil},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := tx.AgentByToken(f.ctx, tc.hash)
				if tc.want == nil {
					wantErr(t, "AgentByToken", err, store.ErrNotFound)
					return nil
				}
				return check(err, *got, *tc.want)
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	// AgentConnected: an agent with an unrevoked token is connected; one
	// with none (or only revoked ones) is not.
	lonely := f.agent()
	f.tx(func(tx store.Tx) error {
		k := newAgentToken(lonely.ID)
		k.RevokedAt = at(time.Minute)
		return tx.CreateAgentToken(f.ctx, k)
	})
	f.tx(func(tx store.Tx) error {
		for id, want := range map[string]bool{ag.ID: true, other.ID: true, lonely.ID: false} {
			got, err := tx.AgentConnected(f.ctx, id)
			if err != nil {
				return err
			}
			same(f, "AgentConnected "+id, got, want)
		}
		return nil
	})
	// A paused agent is still found: what it may do is the caller's call.
	f.tx(func(tx store.Tx) error { return tx.SetAgentPaused(f.ctx, ag.ID, true, at(time.Hour)) })
	f.tx(func(tx store.Tx) error {
		got, err := tx.AgentByToken(f.ctx, tok.TokenHash)
		if err != nil {
			return err
		}
		if !got.IsPaused || got.ID != ag.ID {
			f.Errorf("AgentByToken of a paused agent: %+v", got)
		}
		return nil
	})
	// A taken hash is a conflict, also for another agent.
	dup := newAgentToken(other.ID)
	dup.TokenHash = slices.Clone(tok.TokenHash)
	wantErr(f, "CreateAgentToken with a taken hash",
		f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateAgentToken(f.ctx, dup) }), store.ErrConflict)
	f.tx(func(tx store.Tx) error {
		got, err := tx.AgentByToken(f.ctx, tok.TokenHash)
		if err != nil {
			return err
		}
		same(f, "owner of the token after a refused duplicate", got.ID, ag.ID)
		return nil
	})
}

// ---- errors

func testExternalNotFound(f *fixture) {
	missing := func(prefix string) string { return newID(prefix) }
	unknownHash := sha256.Sum256([]byte(missing("Token")))
	cases := []struct {
		name string
		call func(store.Tx) error
	}{
		{"GetExternalAccount", func(tx store.Tx) error {
			_, err := tx.GetExternalAccount(f.ctx, missing("ExternalAccount"))
			return err
		}},
		{"UpdateExternalAccountStatus", func(tx store.Tx) error {
			return tx.UpdateExternalAccountStatus(f.ctx, missing("ExternalAccount"),
				store.ExternalAccountStatusUpdate{Status: "ACTIVE"}, at(0))
		}},
		{"GetAgent", func(tx store.Tx) error { _, err := tx.GetAgent(f.ctx, missing("Agent")); return err }},
		{"SetAgentPaused", func(tx store.Tx) error { return tx.SetAgentPaused(f.ctx, missing("Agent"), true, at(0)) }},
		{"GetDeviceCode", func(tx store.Tx) error { _, err := tx.GetDeviceCode(f.ctx, "AGENT-NONE"); return err }},
		{"RedeemDeviceCode", func(tx store.Tx) error {
			_, err := tx.RedeemDeviceCode(f.ctx, "AGENT-NONE", at(0))
			return err
		}},
		{"AgentByToken", func(tx store.Tx) error { _, err := tx.AgentByToken(f.ctx, unknownHash[:]); return err }},
	}
	for _, c := range cases {
		f.Run(c.name, func(t *testing.T) {
			wantErr(t, c.name, f.s.Tx(f.ctx, c.call), store.ErrNotFound)
		})
	}
}

// testExternalMissingReference: records naming an unknown customer or agent
// are refused with ErrNotFound and not stored.
func testExternalMissingReference(f *fixture) {
	acct := newExternalAccount(newID("Customer"))
	defaultAcct := newExternalAccount(newID("Customer"))
	defaultAcct.DefaultUmaDepositAccount = true
	ag := newAgent(newID("Customer"))
	code := newDeviceCode(newID("Agent"), at(0))
	tok := newAgentToken(newID("Agent"))
	cases := []struct {
		name   string
		create func(store.Tx) error
		get    func(store.Tx) error
	}{
		{"external account of an unknown customer",
			func(tx store.Tx) error { return tx.CreateExternalAccount(f.ctx, acct) },
			func(tx store.Tx) error { _, err := tx.GetExternalAccount(f.ctx, acct.ID); return err }},
		{"default external account of an unknown customer",
			func(tx store.Tx) error { return tx.CreateExternalAccount(f.ctx, defaultAcct) },
			func(tx store.Tx) error { _, err := tx.GetExternalAccount(f.ctx, defaultAcct.ID); return err }},
		{"agent of an unknown customer",
			func(tx store.Tx) error { return tx.CreateAgent(f.ctx, ag) },
			func(tx store.Tx) error { _, err := tx.GetAgent(f.ctx, ag.ID); return err }},
		{"device code of an unknown agent",
			func(tx store.Tx) error { return tx.CreateDeviceCode(f.ctx, code) },
			func(tx store.Tx) error { _, err := tx.GetDeviceCode(f.ctx, code.Code); return err }},
		{"token of an unknown agent",
			func(tx store.Tx) error { return tx.CreateAgentToken(f.ctx, tok) },
			func(tx store.Tx) error { _, err := tx.AgentByToken(f.ctx, tok.TokenHash); return err }},
	}
	for _, c := range cases {
		f.Run(c.name, func(t *testing.T) {
			wantErr(t, "create", f.s.Tx(f.ctx, c.create), store.ErrNotFound)
			wantErr(t, "read back", f.s.Tx(f.ctx, c.get), store.ErrNotFound)
		})
	}
}
