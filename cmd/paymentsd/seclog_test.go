package main

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/service/store/sqlstore"
)

// TestLedgerVerifySecurityLog: `paymentsd ledger verify` recomputes the
// customers' security chains: a clean log verifies and is counted; a
// record's details changed in the database, a record taken out of the
// middle, and two records' places swapped each fail naming the record.
func TestLedgerVerifySecurityLog(t *testing.T) {
	t.Setenv("WALLET_DATABASE", "")
	for _, c := range []struct {
		name, tamper string
		record       int // the record the first problem names (0-based, oldest first)
		want         string
	}{
		{"changed", `UPDATE security_events SET details = '{"by":"PLATFORM","sessionId":"x"}' WHERE id = ?`, 1, "the record was changed"},
		{"missing", `DELETE FROM security_events WHERE id = ?`, 2, "a record is missing or out of place"},
		// Records 2 and 3 change places (their seq), through a free one.
		{"reordered", `UPDATE security_events SET seq = 100 WHERE id = ?1;
			UPDATE security_events SET seq = 2 WHERE seq = 3 AND customer_id = (SELECT customer_id FROM security_events WHERE id = ?1);
			UPDATE security_events SET seq = 3 WHERE id = ?1`, 2, "prev_hash"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, records := securityLogFile(t)
			verify := func() (int, string, string) {
				var out, errOut bytes.Buffer
				code := command(context.Background(), []string{"ledger", "verify", "--database", path}, &out, &errOut)
				return code, out.String(), errOut.String()
			}
			code, out, errOut := verify()
			if code != 0 || !strings.Contains(out, "security log          4 records of 2 customers, every chain recomputed\n") ||
				!strings.Contains(out, "ledger verify: OK") {
				t.Fatalf("clean: exit %d %s\n%s", code, errOut, out)
			}
			raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			if _, err := raw.Exec(c.tamper, records[1]); err != nil {
				t.Fatal(err)
			}
			code, out, errOut = verify()
			want := "ledger verify: FAILED: security_events " + records[c.record] + ": "
			if code != 1 || !strings.Contains(errOut, want) || !strings.Contains(errOut, c.want) ||
				!strings.Contains(out, "security problems") || strings.Contains(out, "ledger verify: OK") {
				t.Fatalf("tampered: exit %d, %q\n%s", code, errOut, out)
			}
		})
	}
}

// securityLogFile is an SQLite database with two customers: three records
// of the first's log (their ids returned, oldest first) and one of the
// second's.
func securityLogFile(t *testing.T) (string, []string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "seclog.db")
	st, err := sqlstore.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC().Truncate(time.Microsecond)
	var out []string
	err = st.Tx(ctx, func(tx store.Tx) error {
		var customers []string
		for i := range 2 {
			c := &store.Customer{ID: ids.New("Customer"), PlatformCustomerID: "p-" + string(rune('a'+i)), CustomerType: "INDIVIDUAL",
				CreatedAt: now, UpdatedAt: now}
			if err := tx.CreateCustomer(ctx, c); err != nil {
				return err
			}
			customers = append(customers, c.ID)
		}
		for i, c := range []string{customers[0], customers[0], customers[0], customers[1]} {
			e := &store.SecurityEvent{ID: ids.New("SecurityEvent"), CustomerID: c, Type: "SESSION_REVOKED",
				Details: []byte(`{"by":"YOU","sessionId":"x"}`), CreatedAt: now.Add(time.Duration(i) * time.Second)}
			if err := tx.AppendSecurityEvent(ctx, e); err != nil {
				return err
			}
			if c == customers[0] {
				out = append(out, e.ID)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return path, out
}

// TestBadWalletURL: paymentsd does not start with a --wallet-url the
// security e-mails could not link to.
func TestBadWalletURL(t *testing.T) {
	t.Setenv("WALLET_PLATFORM_CREDENTIAL", "tok_cmd:cmd-secret")
	args := []string{"--listen", "127.0.0.1:0", "--mode", "sandbox", "--dev-mailbox", "--database",
		filepath.Join(t.TempDir(), "svc.db"), "--log-level", "warn", "--wallet-url", "wallet.example/app"}
	err := run(context.Background(), args, func(string) { t.Error("started") })
	if err == nil || !strings.Contains(err.Error(), "WalletURL must be an absolute http or https URL") {
		t.Fatalf("run: %v", err)
	}
}

// TestLedgerVerifySecurityHeads: with --security-heads, the first run
// writes every customer's head; removing a customer's newest record (which
// the chains alone cannot tell) then fails naming the customer, and so does
// a replaced newest record.
func TestLedgerVerifySecurityHeads(t *testing.T) {
	t.Setenv("WALLET_DATABASE", "")
	for _, c := range []struct {
		name, tamper, want string
	}{
		{"newest removed", `DELETE FROM security_events WHERE id = ?`, "its newest records were removed"},
		{"newest replaced", `UPDATE security_events SET hash = 'ab' || substr(hash, 3), details = '{}' WHERE id = ?`, "hash"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, records := securityLogFile(t)
			heads := filepath.Join(t.TempDir(), "heads.json")
			verify := func() (int, string, string) {
				var out, errOut bytes.Buffer
				code := command(context.Background(), []string{"ledger", "verify", "--database", path, "--security-heads", heads}, &out, &errOut)
				return code, out.String(), errOut.String()
			}
			if code, out, errOut := verify(); code != 0 || !strings.Contains(out, "2 customers' heads written") {
				t.Fatalf("first run: exit %d %s\n%s", code, errOut, out)
			}
			raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			if _, err := raw.Exec(c.tamper, records[2]); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := verify()
			if code != 1 || !strings.Contains(errOut, c.want) || strings.Contains(out, "heads written") {
				t.Fatalf("tampered: exit %d, %q\n%s", code, errOut, out)
			}
		})
	}
}
