package service

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"paywallet/service/mail"
	"paywallet/service/store/sqlstore"
	"paywallet/shared/wire"
)

// FuzzServiceRequest sends arbitrary requests (method, path, query,
// headers, body) through the service's real handler on a SQLite database:
// none may answer 5xx or panic, and a refused request (4xx) must leave
// every table as it was. The seeds are one well-formed request per route,
// with the ids of a real customer, wallet, credential and external account,
// so that mutations reach past the routing into each handler.
func FuzzServiceRequest(f *testing.F) {
	ctx := context.Background()
	path := filepath.Join(f.TempDir(), "fuzz.db")
	st, err := sqlstore.OpenSQLite(ctx, path)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	svc, err := New(ctx, Config{
		Store: st, Mailer: &mail.Mailbox{}, PlatformCredential: testCredential, AtRestKey: testAtRestKey,
		WebAuthnRPID: testRPID, WebAuthnOrigins: []string{testOrigin}, Mode: ModeSandbox,
		// A fuzzed webhookEndpoint is never called.
		WebhookClient: &http.Client{Transport: refuseAll{}},
	})
	if err != nil {
		f.Fatal(err)
	}
	h := svc.Handler()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { raw.Close() })

	send := func(method, target, contentType, idem string, auth uint8, body []byte) *httptest.ResponseRecorder {
		u, err := url.ParseRequestURI(wire.BasePath + target)
		if err != nil {
			return nil // an HTTP server refuses such a request line before any handler
		}
		req := &http.Request{Method: method, URL: u, RequestURI: u.RequestURI(), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Host: "service.test", Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
		req = req.WithContext(ctx)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if idem != "" {
			req.Header.Set("Idempotency-Key", idem)
		}
		switch auth % 4 {
		case 0:
			req.SetBasicAuth("tok_test", "s3cret-platform-value")
		case 1:
			req.SetBasicAuth("tok_test", "wrong")
		case 2:
			req.Header.Set("Authorization", "Bearer "+idem)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	mustJSON := func(method, target string, body any, v any) {
		b, _ := json.Marshal(body)
		rec := send(method, target, "application/json", "", 0, b)
		if rec.Code >= 300 {
			f.Fatalf("%s %s: %d %s", method, target, rec.Code, rec.Body)
		}
		if v != nil {
			if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
				f.Fatal(err)
			}
		}
	}
	var cust wire.Customer
	mustJSON("POST", "/customers", map[string]any{"platformCustomerId": "p-fuzz", "customerType": "INDIVIDUAL", "email": "fuzz@example.com"}, &cust)
	var accts wire.List[wire.InternalAccount]
	mustJSON("GET", "/customers/internal-accounts?customerId="+cust.ID, nil, &accts)
	acct := accts.Data[0].ID
	var creds wire.Data[wire.AuthMethod]
	mustJSON("GET", "/auth/credentials?accountId="+acct, nil, &creds)
	cred := creds.Data[0].ID
	external := map[string]any{"customerId": cust.ID, "currency": "USD", "accountInfo": map[string]any{
		"accountType": "USD_ACCOUNT", "accountNumber": "123456789", "routingNumber": "021000021", "bankAccountType": "CHECKING", "bankName": "Chase Bank",
		"beneficiary": map[string]any{"beneficiaryType": "INDIVIDUAL", "fullName": "Ana Diaz",
			"address": map[string]any{"line1": "1 Main St", "city": "Springfield", "postalCode": "62701", "country": "US"}}}}
	var ea wire.ExternalAccount
	mustJSON("POST", "/customers/external-accounts", external, &ea)

	var pea wire.ExternalAccount
	mustJSON("POST", "/platform/external-accounts", map[string]any{"currency": "BTC",
		"accountInfo": map[string]any{"accountType": "SPARK_WALLET", "address": sparkAddress}}, &pea)
	var pia wire.Data[wire.InternalAccount]
	mustJSON("GET", "/platform/internal-accounts", nil, &pia)
	railed := map[string]any{"customerId": cust.ID, "currency": "USD", "accountInfo": map[string]any{
		"accountType": "USD_ACCOUNT", "accountNumber": "223456789", "routingNumber": "021000021", "paymentRails": []string{"RTP", "ACH"},
		"beneficiary": map[string]any{"beneficiaryType": "INDIVIDUAL", "fullName": "Ana Diaz",
			"address": map[string]any{"line1": "1 Main St", "city": "Springfield", "postalCode": "62701", "country": "US"}}}}
	// An agent of the customer with every permission, and its token: the
	// /agents/me seeds are sent with it (auth 2 sends the Idempotency-Key
	// argument as the bearer token).
	var agent struct{ ID string }
	mustJSON("POST", "/agents", map[string]any{"customerId": cust.ID, "name": "fuzz", "policy": map[string]any{
		"permissions":          []string{"VIEW_TRANSACTIONS", "CREATE_TRANSFERS", "CREATE_QUOTES", "EXECUTE_QUOTES", "MANAGE_EXTERNAL_ACCOUNTS"},
		"defaultExecutionMode": "AUTO",
		"spendingLimits":       map[string]any{"currency": "USD", "perTransactionLimit": 100000, "dailyLimit": 200000}}}, &agent)
	var code struct{ Code string }
	mustJSON("POST", "/agents/"+agent.ID+"/device-codes", nil, &code)
	var access struct{ AccessToken string }
	mustJSON("POST", "/agents/device-codes/"+code.Code+"/redeem", nil, &access)

	quote := map[string]any{"source": map[string]any{"sourceType": "ACCOUNT", "accountId": acct, "customerId": cust.ID},
		"destination": map[string]any{"destinationType": "ACCOUNT", "accountId": ea.ID}, "lockedCurrencySide": "SENDING", "lockedCurrencyAmount": 1000}
	js := func(v any) []byte { b, _ := json.Marshal(v); return b }
	umaIn := map[string]any{"senderUmaAddress": "$success.usd@sandbox.uma.money", "customerId": cust.ID,
		"receivingCurrencyCode": "USD", "receivingCurrencyAmount": 100}
	var pendingUma struct{ ID string }
	mustJSON("POST", "/sandbox/uma/receive", umaIn, &pendingUma)
	lookupQuote := maps.Clone(quote)
	lookupQuote["lookupId"] = "Lookup:0199a3c4-0000-8000-8000-000000000001"
	for _, s := range []struct {
		method, target string
		body           []byte
	}{
		{"POST", "/customers", js(map[string]any{"platformCustomerId": "p-2", "customerType": "INDIVIDUAL", "email": "two@example.com"})},
		{"GET", "/customers?limit=2", nil},
		{"GET", "/customers/internal-accounts?customerId=" + cust.ID, nil},
		{"GET", "/customers/" + cust.ID, nil},
		{"POST", "/customers", js(map[string]any{"customerType": "BUSINESS", "businessInfo": map[string]any{"legalName": "Acme", "country": "US",
			"taxId": "47-1234567", "incorporatedOn": "2018-03-14", "registrationNumber": "5523002"}, "address": map[string]any{"line1": "1 Main", "postalCode": "1", "country": "US"}})},
		{"POST", "/customers", js(map[string]any{"customerType": "INDIVIDUAL", "birthDate": "1990-02-30", "idType": "SSN", "identifier": "123-45-6789", "currencies": []string{"USD"}})},
		{"GET", "/customers?isIncludingDeleted=true", nil},
		{"PATCH", "/customers/" + cust.ID, js(map[string]any{"email": "new@example.com"})},
		{"PATCH", "/internal-accounts/" + acct, []byte(`{"nickname":"x"}`)},
		{"POST", "/internal-accounts/" + acct + "/export", []byte(`{"clientPublicKey":"02aa"}`)},
		{"GET", "/auth/credentials?accountId=" + acct, nil},
		{"POST", "/auth/credentials", js(map[string]any{"accountId": acct, "type": "EMAIL_OTP"})},
		{"DELETE", "/auth/credentials/" + cred, nil},
		{"POST", "/auth/credentials/" + cred + "/challenge", []byte(`{}`)},
		{"POST", "/auth/credentials/" + cred + "/verify", []byte(`{"type":"EMAIL_OTP","encryptedOtpBundle":"x"}`)},
		{"GET", "/auth/sessions?accountId=" + acct, nil},
		{"DELETE", "/auth/sessions/Session:0199a3c4-0000-7000-8000-000000000001", nil},
		{"POST", "/auth/sessions/Session:0199a3c4-0000-7000-8000-000000000001/refresh", []byte(`{"clientPublicKey":"02aa"}`)},
		{"GET", "/discoveries?country=PH", nil},
		{"POST", "/customers/external-accounts", js(external)},
		{"GET", "/customers/external-accounts?customerId=" + cust.ID, nil},
		{"GET", "/customers/external-accounts/" + ea.ID, nil},
		{"DELETE", "/customers/external-accounts/" + ea.ID, nil},
		{"POST", "/platform/external-accounts", js(external)},
		{"GET", "/platform/external-accounts", nil},
		{"POST", "/agents", []byte(`{"name":"a"}`)},
		{"GET", "/exchange-rates?sourceCurrency=USD", nil},
		{"POST", "/quotes", js(quote)},
		{"GET", "/quotes/Quote:0199a3c4-0000-7000-8000-000000000001", nil},
		{"POST", "/quotes/Quote:0199a3c4-0000-7000-8000-000000000001/execute", nil},
		{"GET", "/transactions?customerId=" + cust.ID, nil},
		{"GET", "/transactions/Transaction:0199a3c4-0000-7000-8000-000000000001", nil},
		{"POST", "/transactions/Transaction:0199a3c4-0000-7000-8000-000000000001/confirm", nil},
		{"POST", "/transactions/Transaction:0199a3c4-0000-7000-8000-000000000001/cancel", []byte(`{"reason":"REQUESTED_AFTER_HOURS"}`)},
		{"POST", "/transactions/Transaction:x/cancel", []byte(`{"reason":"\u0000","x":1}`)},
		{"POST", "/sandbox/internal-accounts/" + acct + "/fund", []byte(`{"amount":100}`)},
		{"POST", "/transfer-in", js(map[string]any{"source": map[string]any{"accountId": ea.ID}, "destination": map[string]any{"accountId": acct}, "amount": 100})},
		{"POST", "/transfer-out", js(map[string]any{"source": map[string]any{"accountId": acct}, "destination": map[string]any{"accountId": ea.ID, "paymentRail": "ACH"}, "amount": 100, "remittanceInformation": "r"})},
		{"POST", "/transfer-out", []byte(`{"source":{"accountId":"InternalAccount:x"},"destination":{},"amount":-5}`)},
		{"GET", "/agents/me/external-accounts/" + ea.ID, nil},
		{"POST", "/agents/device-codes/ABCD-EFGH/redeem", []byte(`{}`)},
		{"GET", "/config", nil},
		{"PATCH", "/config", []byte(`{"webhookEndpoint":"https://platform.example/hooks"}`)},
		{"POST", "/sandbox/webhooks/test", nil},
		{"GET", "/webhooks/jwks.json", nil},
		{"GET", "/webhooks/deliveries?failed=true&limit=5", nil},
		{"GET", "/events?type=OUTGOING_PAYMENT.PENDING&limit=5", nil},
		{"POST", "/webhooks/endpoints", []byte(`{"url":"https://a.example/h","eventTypes":["*"]}`)},
		{"POST", "/webhooks/deliveries/Webhook:0199a3c4-0000-7000-8000-000000000001/replay", nil},
		{"GET", "/customers/external-accounts?limit=1", nil},
		{"POST", "/customers/external-accounts", js(railed)},
		{"GET", "/platform/internal-accounts?type=INTERNAL_FIAT&currency=USD", nil},
		{"POST", "/sandbox/internal-accounts/" + pia.Data[0].ID + "/fund", []byte(`{"amount":100}`)},
		{"GET", "/platform/external-accounts/" + pea.ID, nil},
		{"DELETE", "/platform/external-accounts/" + pea.ID, nil},
		{"GET", "/receiver/external-account/" + ea.ID + "?customerId=" + cust.ID, nil},
		{"POST", "/quotes", js(lookupQuote)},
		{"POST", "/quotes", js(map[string]any{"source": map[string]any{"sourceType": "REALTIME_FUNDING", "customerId": cust.ID, "currency": "USD"},
			"destination": map[string]any{"destinationType": "ACCOUNT", "accountId": ea.ID}, "lockedCurrencySide": "RECEIVING", "lockedCurrencyAmount": 500})},
		{"POST", "/quotes", []byte(`{"source":{"sourceType":"REALTIME_FUNDING","currency":"usd","accountId":"x"},"immediatelyExecute":true}`)},
		{"POST", "/sandbox/send", []byte(`{"quoteId":"Quote:0199a3c4-0000-7000-8000-000000000001","currencyCode":"USD","currencyAmount":100}`)},
		{"POST", "/sandbox/send", []byte(`{"quoteId":"","currencyCode":"u","currencyAmount":-1}`)},
		{"POST", "/sandbox/uma/receive", js(umaIn)},
		{"POST", "/sandbox/uma/receive", []byte(`{"senderUmaAddress":"$pending.long.usd@sandbox.uma.money","receiverUmaAddress":"$x@example.com","receivingCurrencyCode":"USD","receivingCurrencyAmount":1}`)},
		{"POST", "/transactions/" + pendingUma.ID + "/approve", []byte(`{"receiverCustomerInfo":{"NATIONALITY":"US"}}`)},
		{"POST", "/transactions/" + pendingUma.ID + "/reject", []byte(`{"reason":"RESTRICTED_JURISDICTION"}`)},
		{"GET", "/receiver/uma/" + url.PathEscape(cust.UmaAddress) + "?customerId=" + cust.ID, nil},
		{"GET", "/receiver/uma/%24bob%40elsewhere.example?customerId=" + cust.ID, nil},
		{"DELETE", "/customers/" + cust.ID, nil}, // last: it closes the wallet the seeds above use
		{"GET", "/no/such/path", nil},
		{"PUT", "/customers", []byte(`{}`)},
	} {
		f.Add(s.method, s.target, "application/json", "", uint8(0), s.body)
		f.Add(s.method, s.target, "application/json", "key-1", uint8(0), s.body)
		f.Add(s.method, s.target, "text/plain", "", uint8(1), s.body)
	}
	agentQuote := map[string]any{"source": map[string]any{"sourceType": "ACCOUNT", "accountId": acct},
		"destination": map[string]any{"destinationType": "ACCOUNT", "accountId": ea.ID}, "lockedCurrencySide": "SENDING", "lockedCurrencyAmount": 1000}
	for _, s := range []struct {
		method, target string
		body           []byte
	}{
		{"GET", "/agents/me", nil},
		{"GET", "/agents/me/internal-accounts?type=EMBEDDED_WALLET&currency=USD&limit=5", nil},
		{"GET", "/agents/me/external-accounts?currency=USD", nil},
		{"POST", "/agents/me/external-accounts", js(map[string]any{"currency": "USD", "accountInfo": external["accountInfo"]})},
		{"GET", "/agents/me/external-accounts/" + ea.ID, nil},
		{"DELETE", "/agents/me/external-accounts/" + ea.ID, nil},
		{"GET", "/agents/me/transactions?status=PENDING&sortOrder=asc&accountIdentifier=" + acct, nil},
		{"GET", "/agents/me/transactions/Transaction:0199a3c4-0000-7000-8000-000000000001", nil},
		{"POST", "/agents/me/quotes", js(agentQuote)},
		{"GET", "/agents/me/quotes/Quote:0199a3c4-0000-7000-8000-000000000001", nil},
		{"POST", "/agents/me/quotes/Quote:0199a3c4-0000-7000-8000-000000000001/execute", nil},
		{"GET", "/agents/me/actions?status=APPROVED", nil},
		{"GET", "/agents/me/actions/AgentAction:0199a3c4-0000-7000-8000-000000000001", nil},
		{"POST", "/agents/me/transfer-in", js(map[string]any{"source": map[string]any{"accountId": ea.ID}, "destination": map[string]any{"accountId": acct}, "amount": 100})},
		{"POST", "/agents/me/transfer-out", js(map[string]any{"source": map[string]any{"accountId": acct}, "destination": map[string]any{"accountId": ea.ID, "paymentRail": "ACH"}, "amount": 100})},
		{"POST", "/agents/me/transfer-out", []byte(`{"source":{"accountId":"InternalAccount:x"},"destination":{},"amount":-5}`)},
	} {
		f.Add(s.method, s.target, "application/json", access.AccessToken, uint8(2), s.body)
		f.Add(s.method, s.target, "application/json", "", uint8(0), s.body)
	}
	f.Add("POST", "/customers", "application/json", "", uint8(0), []byte(`{"email":"\u0000","customerType":["INDIVIDUAL"],"x":1e999}`))
	f.Add("POST", "/quotes", "application/json", "k", uint8(0), []byte(`{"lockedCurrencyAmount":-1,"lockedCurrencySide":"SENDING"}`))
	f.Add("GET", "/customers/%2e%2e/%2e%2e/etc/passwd", "", "", uint8(0), []byte(nil))

	methods := []string{"GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS"}
	f.Fuzz(func(t *testing.T, method, target, contentType, idem string, auth uint8, body []byte) {
		if !strings.HasPrefix(target, "/") || len(target) > 4096 || len(body) > 64<<10 {
			return
		}
		if !validMethod(method) {
			method = methods[int(auth)%len(methods)]
		}
		before := rowCounts(t, raw)
		rec := send(method, target, contentType, idem, auth, body)
		if rec == nil {
			return
		}
		if rec.Code >= 500 {
			t.Fatalf("%s %s (%q, key %q): %d %s", method, target, contentType, idem, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			if after := rowCounts(t, raw); after != before {
				t.Fatalf("%s %s refused with %d %s, but the tables changed: %s -> %s", method, target, rec.Code, rec.Body, before, after)
			}
		}
	})
}

// validMethod reports whether m is an HTTP token a server would accept as
// a method.
func validMethod(m string) bool {
	if m == "" || len(m) > 16 {
		return false
	}
	for _, c := range m {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// rowCounts describes the number of rows of every table, for comparison,
// but idempotency_records: a refusal answered under an Idempotency-Key is
// kept so that a retry with the key gets the same answer.
func rowCounts(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'idempotency_records' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	var b strings.Builder
	for _, n := range names {
		var c int
		if err := db.QueryRow(`SELECT count(*) FROM "` + n + `"`).Scan(&c); err != nil {
			t.Fatal(err)
		}
		b.WriteString(n + "=" + strconv.Itoa(c) + " ")
	}
	return b.String()
}

// refuseAll is a transport that makes no connection.
type refuseAll struct{}

func (refuseAll) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("no network in the fuzz test")
}
