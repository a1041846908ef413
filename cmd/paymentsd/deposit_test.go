package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"paywallet/shared/wire"
)

// TestDepositCommand runs the server in production mode on a temporary
// SQLite database, makes a wallet, and records a bank deposit to it with
// `paymentsd deposit` on the same database: the transaction is printed as
// JSON, the server shows the credit, and refusals are errors that say why.
func TestDepositCommand(t *testing.T) {
	t.Setenv("WALLET_PLATFORM_CREDENTIAL", "tok_cmd:cmd-secret")
	dir := t.TempDir()
	db := filepath.Join(dir, "svc.db")
	banks := filepath.Join(dir, "banks.json")
	if err := os.WriteFile(banks, []byte(`{"USD":{"accountType":"USD_ACCOUNT","accountNumber":"123456789012","routingNumber":"011000015","bankName":"Operator Bank"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	common := []string{"--database", db, "--mode", "production", "--deposit-accounts", banks}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		// No e-mail is sent in this test; production mode wants SMTP configured.
		done <- run(ctx, append([]string{"--listen", "127.0.0.1:0", "--log-level", "error", "--smtp-addr", "127.0.0.1:1"}, common...),
			func(u string) { urls <- u })
	}()
	var base string
	select {
	case base = <-urls:
	case err := <-done:
		t.Fatalf("paymentsd exited: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("paymentsd did not start")
	}
	call := func(method, path string, body any, out any) {
		t.Helper()
		var rdr *bytes.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rdr = bytes.NewReader(b)
		} else {
			rdr = bytes.NewReader(nil)
		}
		req, _ := http.NewRequest(method, base+wire.BasePath+path, rdr)
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth("tok_cmd", "cmd-secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d", method, path, resp.StatusCode)
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	var cust wire.Customer
	call("POST", "/customers", map[string]any{"platformCustomerId": "p-1", "customerType": "INDIVIDUAL", "email": "a@example.com"}, &cust)
	var list wire.List[wire.InternalAccount]
	call("GET", "/customers/internal-accounts?customerId="+cust.ID, nil, &list)
	if len(list.Data) != 1 || len(list.Data[0].FundingPaymentInstructions) != 1 {
		t.Fatalf("accounts %+v", list.Data)
	}
	info := list.Data[0].FundingPaymentInstructions[0].AccountOrWalletInfo
	ref, _ := info["reference"].(string)
	if ref == "" || info["accountNumber"] != "123456789012" {
		t.Fatalf("instructions %+v", info)
	}

	deposit := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := runDeposit(context.Background(), append(append([]string{}, common...), args...), &out, &errOut)
		return out.String(), err
	}
	out, err := deposit("-reference", ref, "-amount", "12550", "-currency", "USD", "-sender-name", "Ana Diaz", "-bank-reference", "WIRE-1")
	if err != nil {
		t.Fatal(err)
	}
	var x wire.Transaction
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if x.Type != "INCOMING" || x.Status != "COMPLETED" || x.ReceivedAmount.Amount != 12550 || x.Destination.AccountID != list.Data[0].ID {
		t.Fatalf("deposit %s", out)
	}
	call("GET", "/customers/internal-accounts?customerId="+cust.ID, nil, &list)
	if list.Data[0].Balance.Amount != 12550 {
		t.Fatalf("balance after the deposit %+v", list.Data[0].Balance)
	}

	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"-reference", "00000000Z", "-amount", "1", "-currency", "USD"}, []string{"reference"}},
		{[]string{"-reference", ref, "-amount", "1", "-currency", "EUR", "-bank-reference", "W-2"}, []string{"INVALID_INPUT", "currency", "USD"}},
		{[]string{"-reference", ref, "-amount", "1", "-currency", "USD"}, []string{"INVALID_INPUT", "bankReference"}},
		{[]string{"-reference", ref, "-currency", "USD"}, []string{"amount", "required"}},
		{[]string{"-reference", ref, "-amount", "1", "-currency", "USD", "-bank-reference", "WIRE-1"}, []string{"CONFLICT", "WIRE-1"}},
		{[]string{"-reference", ref, "-amount", "1.5", "-currency", "USD", "-bank-reference", "W-3"}, []string{"integer"}},
	} {
		out, err := deposit(c.args...)
		if err == nil || out != "" {
			t.Fatalf("%v: accepted: %s", c.args, out)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not mention %q", c.args, err, w)
			}
		}
	}
	// A well-formed reference that names no account.
	unknown := ""
	for _, c := range "0123456789ABCDEFGHJKMNPQRSTVWXYZ" {
		if _, err := deposit("-reference", "ZZZZZZZZ"+string(c), "-amount", "1", "-currency", "USD", "-bank-reference", "W-9"); err != nil && strings.Contains(err.Error(), "REFERENCE_NOT_FOUND") {
			unknown = "ZZZZZZZZ" + string(c)
			break
		}
	}
	if unknown == "" {
		t.Fatal("no unknown reference was refused with REFERENCE_NOT_FOUND")
	}
	call("GET", "/customers/internal-accounts?customerId="+cust.ID, nil, &list)
	if list.Data[0].Balance.Amount != 12550 {
		t.Fatalf("balance after the refusals %+v", list.Data[0].Balance)
	}
}
