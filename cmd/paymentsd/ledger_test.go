package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"paywallet/service/ids"
	"paywallet/service/ledger"
	"paywallet/service/store"
	"paywallet/service/store/sqlstore"
)

// booksFile is an SQLite database with a wallet funded twice, the first
// funding sealed and the second waiting for the sealer, and the head.
func booksFile(t *testing.T) (path, wallet string, head ledger.Head) {
	t.Helper()
	ctx := context.Background()
	path = filepath.Join(t.TempDir(), "books.db")
	st, err := sqlstore.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC().Truncate(time.Microsecond)
	wallet = ids.New("InternalAccount")
	fund := func(tx store.Tx, customer string, amount int64) error {
		x := &store.Transaction{ID: ids.New("Transaction"), Type: "INCOMING", Status: "COMPLETED", CustomerID: customer,
			PlatformCustomerID: "p-1", DestinationAccountID: wallet, SendingCurrency: "USD", ReceivingCurrency: "USD",
			SentAmount: amount, ReceivedAmount: amount, ExchangeRate: 1, Reference: fmt.Sprint("R-", amount), SettledAt: now, CreatedAt: now, UpdatedAt: now}
		if err := tx.CreateTransaction(ctx, x); err != nil {
			return err
		}
		_, err := tx.PostLedger(ctx, ledger.New(ids.New("LedgerTransaction"), ledger.KindFunding, now, "Sandbox funding").
			For(x.ID, "").Move(ledger.Sandbox("USD"), "USD", amount, ledger.WalletAccount(wallet, ledger.Available), "USD", amount))
		return err
	}
	customer := ids.New("Customer")
	err = st.Tx(ctx, func(tx store.Tx) error {
		if err := tx.CreateCustomer(ctx, &store.Customer{ID: customer, PlatformCustomerID: "p-1", CustomerType: "INDIVIDUAL",
			CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		if err := tx.CreateInternalAccount(ctx, &store.InternalAccount{ID: wallet, CustomerID: customer, Type: "INTERNAL_FIAT",
			Status: "ACTIVE", Currency: "USD", CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		return fund(tx, customer, 10_000)
	})
	if err == nil {
		_, head, err = st.SealLedger(ctx, 100, now)
	}
	if err == nil {
		err = st.Tx(ctx, func(tx store.Tx) error { return fund(tx, customer, 2_500) })
	}
	if err != nil {
		t.Fatal(err)
	}
	return path, wallet, head
}

// TestLedgerVerifyCommand runs `paymentsd ledger verify` in-process: a
// clean database verifies (exit 0, the counts and the head printed), an
// anchor is compared, a balance changed by hand fails (exit 1) naming the
// wallet, and bad use says what is wrong.
func TestLedgerVerifyCommand(t *testing.T) {
	t.Setenv("WALLET_DATABASE", "")
	path, wallet, head := booksFile(t)
	verify := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := command(context.Background(), append([]string{"ledger", "verify"}, args...), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, out, errOut := verify("--database", path)
	for _, want := range []string{"ledger transactions   2 (1 sealed, 1 waiting for the sealer)", "entries               4",
		"payments              2 checked against their status", "chain head            seq 1, " + head.Hash.String() + ", sealed at ",
		"ledger verify: OK\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code != 0 || errOut != "" {
		t.Fatalf("clean: exit %d, %s", code, errOut)
	}

	anchor := func(body string) string {
		f := filepath.Join(t.TempDir(), "head.json")
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	good := anchor(`{"sequence": 1, "hash": "` + head.Hash.String() + `", "signature": "ignored here"}`)
	if code, out, errOut := verify("--database", path, "--anchor", good); code != 0 || !strings.Contains(out, "anchor                seq 1, "+head.Hash.String()) {
		t.Fatalf("good anchor: exit %d\n%s%s", code, out, errOut)
	}
	for _, c := range []struct{ body, want string }{
		{`{"sequence": 1, "hash": "` + strings.Repeat("ab", 32) + `"}`, "ledger verify: FAILED: ledger_chain seq 1: link " + head.Hash.String() + " differs from the anchor"},
		{`{"sequence": 2, "hash": "` + head.Hash.String() + `"}`, "ledger verify: FAILED: ledger_chain seq 2: missing: the chain ends at seq 1"},
		{`{"sequence": 0, "hash": "xyz"}`, "sequence must be a link number from 1; hash must be 64 hex digits"},
		{`[]`, "cannot unmarshal"},
	} {
		code, out, errOut := verify("--database", path, "--anchor", anchor(c.body))
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Fatalf("anchor %s: exit %d, %q\n%s", c.body, code, errOut, out)
		}
	}

	// Someone adds a million to the wallet's cached balance.
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE internal_accounts SET available = available + 1000000 WHERE id = ?`, wallet); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = verify("--database", path)
	want := "paymentsd: ledger verify: FAILED: internal_accounts " + wallet + ": caches 1012500 available and 0 held; its entries sum to 12500 and 0"
	if code != 1 || !strings.HasPrefix(errOut, want) || !strings.Contains(out, "problems              1\n  internal_accounts "+wallet) ||
		strings.Contains(out, "ledger verify: OK") {
		t.Fatalf("tampered: exit %d, %q\n%s", code, errOut, out)
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 1, "--database is required"},
		{[]string{"--database", filepath.Join(t.TempDir(), "none.db")}, 1, "no database at"},
		{[]string{"--database", path, "extra"}, 1, "unexpected arguments"},
		{[]string{"-h"}, 0, "Usage: paymentsd ledger verify"},
	} {
		code, _, errOut := verify(c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Fatalf("%v: exit %d, %q", c.args, code, errOut)
		}
	}
	var out2, errOut2 bytes.Buffer
	if code := command(context.Background(), []string{"ledger"}, &out2, &errOut2); code != 1 || !strings.Contains(errOut2.String(), "name a command: verify") {
		t.Fatalf("ledger alone: exit %d, %q", code, errOut2.String())
	}
}
