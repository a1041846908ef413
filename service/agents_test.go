package service

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"paywallet/service/store/sqlstore"
	"paywallet/shared/wire"
)

func policy(perms ...string) map[string]any {
	return map[string]any{
		"permissions":          perms,
		"defaultExecutionMode": "AUTO",
		"spendingLimits":       map[string]any{"currency": "USD", "perTransactionLimit": 10000, "dailyLimit": nil, "monthlyLimit": nil},
	}
}

type agentOut struct {
	ID          string `json:"id"`
	CustomerID  string `json:"customerId"`
	IsPaused    bool   `json:"isPaused"`
	IsConnected bool   `json:"isConnected"`
}

// connectAgent creates an agent for the customer and redeems a device code,
// returning the agent and its access token.
func (e *env) connectAgent(customerID string, pol map[string]any) (agentOut, string) {
	e.t.Helper()
	r := e.do("POST", "/agents", map[string]any{"customerId": customerID, "name": "Budget bot", "policy": pol}, nil)
	e.mustStatus(r, http.StatusCreated)
	var a agentOut
	r.decode(e.t, &a)
	r = e.do("POST", "/agents/"+a.ID+"/device-codes", nil, nil)
	e.mustStatus(r, http.StatusCreated)
	var dc struct{ Code string }
	r.decode(e.t, &dc)
	r = e.do("POST", "/agents/device-codes/"+dc.Code+"/redeem", nil, map[string]string{"Authorization": ""})
	e.mustStatus(r, http.StatusOK)
	var red struct{ AccessToken, AgentID string }
	r.decode(e.t, &red)
	if red.AgentID != a.ID || !strings.HasPrefix(red.AccessToken, "gat_") {
		e.t.Fatalf("redeem %s", r.body)
	}
	return a, red.AccessToken
}

func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

func TestAgentReadsOnlyItsCustomersAccounts(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("agent-owner@example.com")
	other := e.newWallet("someone-else@example.com")
	mine := e.createAccount(usdBody(w.customer.ID, "000000000011"))
	theirs := e.createAccount(usdBody(other.customer.ID, "000000000012"))
	a, token := e.connectAgent(w.customer.ID, policy("MANAGE_EXTERNAL_ACCOUNTS"))

	r := e.do("GET", "/agents/me/external-accounts/"+mine.ID, nil, bearer(token))
	e.mustStatus(r, 200)
	missing := e.do("GET", "/agents/me/external-accounts/ExternalAccount:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b", nil, bearer(token))
	foreign := e.do("GET", "/agents/me/external-accounts/"+theirs.ID, nil, bearer(token))
	if missing.status != 404 || foreign.status != 404 || string(missing.body) != string(foreign.body) {
		t.Fatalf("another customer's account must look missing: %d %s / %d %s", foreign.status, foreign.body, missing.status, missing.body)
	}
	// Never with the platform credential, nor an unknown token.
	if r := e.do("GET", "/agents/me/external-accounts/"+mine.ID, nil, nil); r.status != 401 {
		t.Fatalf("platform credential accepted: %d", r.status)
	}
	if r := e.do("GET", "/agents/me/external-accounts/"+mine.ID, nil, bearer("gat_unknown")); r.status != 401 {
		t.Fatalf("unknown token: %d", r.status)
	}
	// Connected now; a paused agent is refused, a resumed one allowed again.
	r = e.do("GET", "/agents/"+a.ID, nil, nil)
	var got agentOut
	r.decode(t, &got)
	if !got.IsConnected {
		t.Fatal("agent not connected after redeem")
	}
	e.mustStatus(e.do("PATCH", "/agents/"+a.ID, map[string]any{"isPaused": true}, nil), 200)
	if r := e.do("GET", "/agents/me/external-accounts/"+mine.ID, nil, bearer(token)); r.status != 403 {
		t.Fatalf("paused agent: %d", r.status)
	}
	e.mustStatus(e.do("PATCH", "/agents/"+a.ID, map[string]any{"isPaused": false}, nil), 200)
	e.mustStatus(e.do("GET", "/agents/me/external-accounts/"+mine.ID, nil, bearer(token)), 200)
}

func TestAgentPolicyIsEnforced(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("pol@example.com")
	acct := e.createAccount(usdBody(w.customer.ID, "000000000021"))
	_, viewer := e.connectAgent(w.customer.ID, policy("VIEW_TRANSACTIONS"))
	if r := e.do("GET", "/agents/me/external-accounts/"+acct.ID, nil, bearer(viewer)); r.status != 403 {
		t.Fatalf("agent without MANAGE_EXTERNAL_ACCOUNTS: %d", r.status)
	}
	restricted := policy("MANAGE_EXTERNAL_ACCOUNTS")
	restricted["accountRestrictions"] = map[string]any{"allowedAccountIds": []string{"ExternalAccount:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b"}}
	_, token := e.connectAgent(w.customer.ID, restricted)
	if r := e.do("GET", "/agents/me/external-accounts/"+acct.ID, nil, bearer(token)); r.status != 404 {
		t.Fatalf("account outside the allow-list: %d", r.status)
	}
}

func TestAgentCreateRefusals(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("ac@example.com")
	bad := policy("FLY")
	bad["defaultExecutionMode"] = "SOMETIMES"
	delete(bad, "spendingLimits")
	restricted := policy("VIEW_TRANSACTIONS")
	restricted["accountRestrictions"] = map[string]any{
		"allowedAccountIds": []string{"acct-1"},
		"accountRules":      []map[string]any{{"accountId": "acct-2", "perTransactionLimit": -1, "executionMode": "LATER"}},
	}
	restricted["approvalThresholds"] = map[string]any{"currency": "dollars", "amount": -5}
	noAmount := policy("VIEW_TRANSACTIONS")
	noAmount["approvalThresholds"] = map[string]any{"currency": "USD"}
	tests := []struct {
		name   string
		body   map[string]any
		fields string
	}{
		{"account restrictions and thresholds", map[string]any{"customerId": w.customer.ID, "name": "n", "policy": restricted},
			"policy.accountRestrictions.accountRules[0].accountId,policy.accountRestrictions.accountRules[0].executionMode," +
				"policy.accountRestrictions.accountRules[0].perTransactionLimit,policy.accountRestrictions.allowedAccountIds[0]," +
				"policy.approvalThresholds.amount,policy.approvalThresholds.currency"},
		{"threshold without an amount", map[string]any{"customerId": w.customer.ID, "name": "n", "policy": noAmount}, "policy.approvalThresholds.amount"},
		{"everything wrong", map[string]any{"customerId": "x", "name": "", "policy": bad},
			"customerId,name,policy.defaultExecutionMode,policy.permissions[0],policy.spendingLimits"},
		{"unknown customer", map[string]any{"customerId": "Customer:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b", "name": "n", "policy": policy("VIEW_TRANSACTIONS")}, "customerId"},
		{"unknown policy field", map[string]any{"customerId": w.customer.ID, "name": "n", "policy": map[string]any{"permissions": []string{"VIEW_TRANSACTIONS"}, "mood": "happy"}}, "policy.mood"},
		// Before, only the first problem was named, and a nested member by
		// its own name alone ("policy.daily").
		{"nested unknown and mistyped policy members", map[string]any{"customerId": w.customer.ID, "name": "n", "policy": map[string]any{
			"permissions": []any{"VIEW_TRANSACTIONS", 7}, "mood": "happy",
			"spendingLimits": map[string]any{"currency": "USD", "daily": 5, "monthlyLimit": "lots"}}},
			"policy.mood,policy.permissions[1],policy.spendingLimits.daily,policy.spendingLimits.monthlyLimit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do("POST", "/agents", tt.body, nil)
			if r.status != 400 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			var fields []string
			for _, fe := range r.errorBody(t).Details["errors"].([]any) {
				fields = append(fields, fe.(map[string]any)["field"].(string))
			}
			if strings.Join(fields, ",") != tt.fields {
				t.Fatalf("fields %v, want %s", fields, tt.fields)
			}
		})
	}
}

func TestDeviceCodes(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("dc@example.com")
	r := e.do("POST", "/agents", map[string]any{"customerId": w.customer.ID, "name": "n", "policy": policy("VIEW_TRANSACTIONS")}, nil)
	var a agentOut
	r.decode(t, &a)
	code := func() string {
		r := e.do("POST", "/agents/"+a.ID+"/device-codes", nil, nil)
		e.mustStatus(r, 201)
		var dc struct{ Code string }
		r.decode(t, &dc)
		return dc.Code
	}
	redeem := func(c string) int {
		return e.do("POST", "/agents/device-codes/"+c+"/redeem", nil, map[string]string{"Authorization": ""}).status
	}
	old := code()
	fresh := code()
	if s := redeem(old); s != 400 {
		t.Fatalf("a replaced code redeemed: %d", s)
	}
	// Exactly one of many racing redeems wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 8 {
		wg.Go(func() {
			if redeem(fresh) == 200 {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d redeems won", wins)
	}
	r = e.do("GET", "/agents/device-codes/"+fresh+"/status", nil, nil)
	if !strings.Contains(string(r.body), `"redeemed":true`) {
		t.Fatalf("status %s", r.body)
	}
	late := code()
	e.clock.Advance(10 * time.Minute)
	if s := redeem(late); s != 400 {
		t.Fatalf("an expired code redeemed: %d", s)
	}
	if s := redeem("AGENT-NOPE-NOPE"); s != 404 {
		t.Fatalf("unknown code: %d", s)
	}
}

// TestAgentTokenStoredOnlyAsHash: after a redeem, neither the access token
// nor its secret part is anywhere in the database files, yet the token works.
func TestAgentTokenStoredOnlyAsHash(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(dir, "agents.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := newEnv(t, func(c *Config) { c.Store = st })
	w := e.newWallet("hash@example.com")
	mine := e.createAccount(usdBody(w.customer.ID, "000000000021"))
	_, token := e.connectAgent(w.customer.ID, policy("MANAGE_EXTERNAL_ACCOUNTS"))
	e.mustStatus(e.do("GET", "/agents/me/external-accounts/"+mine.ID, nil, bearer(token)), http.StatusOK)

	secret := strings.TrimPrefix(token, "gat_")
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the access token", f.Name())
		}
	}
}

var allPermissions = []string{"VIEW_TRANSACTIONS", "CREATE_TRANSFERS", "CREATE_QUOTES", "EXECUTE_QUOTES", "MANAGE_EXTERNAL_ACCOUNTS"}

// without is every permission but the ones named.
func without(perms ...string) []string {
	var out []string
	for _, p := range allPermissions {
		if !slices.Contains(perms, p) {
			out = append(out, p)
		}
	}
	return out
}

// limits sets the policy's spending limits (nil values stay null).
func limits(pol map[string]any, currency string, perTx int64, extra map[string]any) map[string]any {
	sl := map[string]any{"currency": currency, "perTransactionLimit": perTx, "dailyLimit": nil, "monthlyLimit": nil}
	for k, v := range extra {
		sl[k] = v
	}
	pol["spendingLimits"] = sl
	return pol
}

// agentWorld is a funded, logged-in payer with two ACTIVE destinations and
// a platform-made quote and executed payment, and another customer with
// the same, so that every agent operation has foreign ids to be refused.
type agentWorld struct {
	e               *env
	mine, theirs    payer
	myDest, myDest2 wire.ExternalAccount
	theirDest       wire.ExternalAccount
	myTx, theirTx   string // executed payments made by the platform
	theirQuote      wire.Quote
	myPlatformQuote wire.Quote
}

func newAgentWorld(t *testing.T, opts ...func(*Config)) *agentWorld {
	e := newEnv(t, append([]func(*Config){sandbox}, opts...)...)
	w := &agentWorld{e: e}
	w.mine = e.newPayer("agent-owner@example.com", 1_000_000)
	w.theirs = e.newPayer("someone-else@example.com", 1_000_000)
	w.myDest = e.destination(w.mine, "00011")
	w.myDest2 = e.destination(w.mine, "00012")
	w.theirDest = e.destination(w.theirs, "00013")
	pay := func(p payer, dest string) string {
		q := e.quote(quoteBody(p, dest, "SENDING", 1000))
		e.mustStatus(e.execute(q, mustStamp(t, p.key, payloadOf(t, q))), 200)
		return q.TransactionID
	}
	w.myTx = pay(w.mine, w.myDest2.ID)
	w.theirTx = pay(w.theirs, w.theirDest.ID)
	w.theirQuote = e.quote(quoteBody(w.theirs, w.theirDest.ID, "SENDING", 1000))
	w.myPlatformQuote = e.quote(quoteBody(w.mine, w.myDest.ID, "SENDING", 1000))
	return w
}

// agentQuote creates a quote as the agent and returns it.
func (w *agentWorld) agentQuote(token, dest string, amount int64) wire.Quote {
	w.e.t.Helper()
	r := w.e.do("POST", "/agents/me/quotes", quoteBody(w.mine, dest, "SENDING", amount), bearer(token))
	w.e.mustStatus(r, http.StatusCreated)
	var q wire.Quote
	r.decode(w.e.t, &q)
	return q
}

// agentExecute executes a quote as the agent with the wallet's stamp.
func (w *agentWorld) agentExecute(token string, q wire.Quote, headers ...string) response {
	w.e.t.Helper()
	h := bearer(token)
	h[wire.HeaderWalletSignature] = mustStamp(w.e.t, w.mine.key, payloadOf(w.e.t, q))
	for i := 0; i+1 < len(headers); i += 2 {
		h[headers[i]] = headers[i+1]
	}
	return w.e.do("POST", "/agents/me/quotes/"+q.ID+"/execute", nil, h)
}

func wantRefusal(t *testing.T, r response, status int, code string) wire.Error {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	e := r.errorBody(t)
	if e.Code != code {
		t.Fatalf("code %s, want %s: %s", e.Code, code, r.body)
	}
	return e
}

func idsOf[T any](t *testing.T, r response, id func(T) string) []string {
	t.Helper()
	var l wire.List[T]
	r.decode(t, &l)
	var out []string
	for _, v := range l.Data {
		out = append(out, id(v))
	}
	slices.Sort(out)
	return out
}

// TestAgentOperationsNeedTheirPermission: every /agents/me operation is
// refused 403 FORBIDDEN to an agent whose policy lacks the permission the
// reference names for it, 401 with the platform credential or without a
// token, and 403 to a paused agent; GET /agents/me needs no permission.
func TestAgentOperationsNeedTheirPermission(t *testing.T) {
	w := newAgentWorld(t)
	e := w.e
	q := w.myPlatformQuote
	tests := []struct {
		method, path string
		body         any
		perms        []string // any one of them suffices
	}{
		{"GET", "/agents/me/internal-accounts", nil, []string{"VIEW_TRANSACTIONS"}},
		{"GET", "/agents/me/external-accounts", nil, []string{"MANAGE_EXTERNAL_ACCOUNTS"}},
		{"POST", "/agents/me/external-accounts", usdBody("", "000000000099"), []string{"MANAGE_EXTERNAL_ACCOUNTS"}},
		{"GET", "/agents/me/external-accounts/" + w.myDest.ID, nil, []string{"MANAGE_EXTERNAL_ACCOUNTS"}},
		{"DELETE", "/agents/me/external-accounts/" + w.myDest.ID, nil, []string{"MANAGE_EXTERNAL_ACCOUNTS"}},
		{"GET", "/agents/me/transactions", nil, []string{"VIEW_TRANSACTIONS"}},
		{"GET", "/agents/me/transactions/" + w.myTx, nil, []string{"VIEW_TRANSACTIONS"}},
		{"POST", "/agents/me/quotes", quoteBody(w.mine, w.myDest.ID, "SENDING", 1000), []string{"CREATE_QUOTES"}},
		{"GET", "/agents/me/quotes/" + q.ID, nil, []string{"CREATE_QUOTES", "EXECUTE_QUOTES"}},
		{"POST", "/agents/me/quotes/" + q.ID + "/execute", nil, []string{"EXECUTE_QUOTES"}},
		{"POST", "/agents/me/transfer-in", transferInBody(w.myDest.ID, w.mine.account.ID, 1000), []string{"CREATE_TRANSFERS"}},
		{"POST", "/agents/me/transfer-out", transferOutBody(w.mine.account.ID, w.myDest.ID, 1000), []string{"CREATE_TRANSFERS"}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			body := tt.body
			if m, ok := body.(map[string]any); ok {
				delete(m, "customerId")
			}
			a, token := e.connectAgent(w.mine.customer.ID, policy(without(tt.perms...)...))
			r := wantRefusal(t, e.do(tt.method, tt.path, body, bearer(token)), 403, "FORBIDDEN")
			if !strings.Contains(r.Message, tt.perms[0]) {
				t.Fatalf("the refusal does not name the permission: %s", r.Message)
			}
			wantRefusal(t, e.do(tt.method, tt.path, body, nil), 401, "UNAUTHORIZED")
			wantRefusal(t, e.do(tt.method, tt.path, body, map[string]string{"Authorization": ""}), 401, "UNAUTHORIZED")
			e.mustStatus(e.do("PATCH", "/agents/"+a.ID, map[string]any{"isPaused": true}, nil), 200)
			wantRefusal(t, e.do(tt.method, tt.path, body, bearer(token)), 403, "FORBIDDEN")
		})
	}
	// GET /agents/me: any agent, never the platform credential.
	a, token := e.connectAgent(w.mine.customer.ID, policy("VIEW_TRANSACTIONS"))
	r := e.do("GET", "/agents/me", nil, bearer(token))
	e.mustStatus(r, 200)
	var me struct {
		ID, CustomerID string
		IsConnected    bool
		Policy         map[string]any
		Usage          map[string]any
	}
	r.decode(t, &me)
	if me.ID != a.ID || me.CustomerID != w.mine.customer.ID || !me.IsConnected || me.Policy["defaultExecutionMode"] != "AUTO" ||
		me.Usage["dailyResetDate"] != "2026-11-23" || me.Usage["monthlyResetMonth"] != "2026-12" || me.Usage["dailySpend"] != 0.0 {
		t.Fatalf("GET /agents/me: %s", r.body)
	}
	wantRefusal(t, e.do("GET", "/agents/me", nil, nil), 401, "UNAUTHORIZED")
	e.mustStatus(e.do("PATCH", "/agents/"+a.ID, map[string]any{"isPaused": true}, nil), 200)
	wantRefusal(t, e.do("GET", "/agents/me", nil, bearer(token)), 403, "FORBIDDEN")
}

// TestAgentSeesOnlyItsCustomer: lists hold the agent's customer's data
// only, and another customer's ids are answered exactly as missing ones.
func TestAgentSeesOnlyItsCustomer(t *testing.T) {
	w := newAgentWorld(t)
	e := w.e
	_, token := e.connectAgent(w.mine.customer.ID, policy(allPermissions...))
	h := bearer(token)

	got := idsOf(t, e.do("GET", "/agents/me/internal-accounts", nil, h), func(a wire.InternalAccount) string { return a.ID })
	if !slices.Equal(got, []string{w.mine.account.ID}) {
		t.Fatalf("internal accounts %v", got)
	}
	got = idsOf(t, e.do("GET", "/agents/me/external-accounts", nil, h), func(a wire.ExternalAccount) string { return a.ID })
	if want := []string{w.myDest.ID, w.myDest2.ID}; !slices.Equal(got, sorted(want)) {
		t.Fatalf("external accounts %v", got)
	}
	got = idsOf(t, e.do("GET", "/agents/me/transactions", nil, h), func(x wire.Transaction) string { return x.ID })
	for _, id := range got {
		x := e.transaction(id)
		if x.CustomerID != w.mine.customer.ID {
			t.Fatalf("listed another customer's transaction %s", id)
		}
	}
	if !slices.Contains(got, w.myTx) || slices.Contains(got, w.theirTx) {
		t.Fatalf("transactions %v", got)
	}
	e.mustStatus(e.do("GET", "/agents/me/transactions/"+w.myTx, nil, h), 200)

	same := func(what string, foreign, missing response) {
		t.Helper()
		if foreign.status != missing.status || string(foreign.body) != string(missing.body) {
			t.Fatalf("%s: another customer's id must look missing: %d %s / %d %s", what, foreign.status, foreign.body, missing.status, missing.body)
		}
	}
	const noTx = "Transaction:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b"
	const noQuote = "Quote:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b"
	const noAcct = "ExternalAccount:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b"
	const noWallet = "InternalAccount:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b"
	same("transaction", e.do("GET", "/agents/me/transactions/"+w.theirTx, nil, h), e.do("GET", "/agents/me/transactions/"+noTx, nil, h))
	same("external account", e.do("GET", "/agents/me/external-accounts/"+w.theirDest.ID, nil, h), e.do("GET", "/agents/me/external-accounts/"+noAcct, nil, h))
	same("delete external account", e.do("DELETE", "/agents/me/external-accounts/"+w.theirDest.ID, nil, h), e.do("DELETE", "/agents/me/external-accounts/"+noAcct, nil, h))
	if x := e.getAccount(w.theirDest.ID); x.Status != "ACTIVE" {
		t.Fatalf("another customer's account was deleted: %s", x.Status)
	}
	same("quote", e.do("GET", "/agents/me/quotes/"+w.theirQuote.ID, nil, h), e.do("GET", "/agents/me/quotes/"+noQuote, nil, h))
	same("execute", e.do("POST", "/agents/me/quotes/"+w.theirQuote.ID+"/execute", nil, h), e.do("POST", "/agents/me/quotes/"+noQuote+"/execute", nil, h))
	// A quote of the agent's own customer that the platform made is not the agent's.
	same("platform's quote", e.do("GET", "/agents/me/quotes/"+w.myPlatformQuote.ID, nil, h), e.do("GET", "/agents/me/quotes/"+noQuote, nil, h))
	same("execute platform's quote", e.do("POST", "/agents/me/quotes/"+w.myPlatformQuote.ID+"/execute", nil, h),
		e.do("POST", "/agents/me/quotes/"+noQuote+"/execute", nil, h))
	if r := e.do("GET", "/agents/me/quotes/"+noQuote, nil, h); r.status != 404 {
		t.Fatalf("missing quote: %d", r.status)
	}
	// Quote from another customer's wallet or to another customer's account.
	foreignSource := quoteBody(w.theirs, w.myDest.ID, "SENDING", 1000)
	missingSource := quoteBody(w.theirs, w.myDest.ID, "SENDING", 1000)
	missingSource["source"].(map[string]any)["accountId"] = noWallet
	same("quote source", e.do("POST", "/agents/me/quotes", foreignSource, h), e.do("POST", "/agents/me/quotes", missingSource, h))
	same("quote destination", e.do("POST", "/agents/me/quotes", quoteBody(w.mine, w.theirDest.ID, "SENDING", 1000), h),
		e.do("POST", "/agents/me/quotes", quoteBody(w.mine, noAcct, "SENDING", 1000), h))
	// Another customer named in the body.
	body := quoteBody(w.mine, w.myDest.ID, "SENDING", 1000)
	body["source"].(map[string]any)["customerId"] = w.theirs.customer.ID
	body["immediatelyExecute"] = true
	r := wantRefusal(t, e.do("POST", "/agents/me/quotes", body, h), 400, "INVALID_INPUT")
	if f := errorFields(r); f != "immediatelyExecute,source.customerId" {
		t.Fatalf("fields %s", f)
	}
	// An external account for another customer.
	wantRefusal(t, e.do("POST", "/agents/me/external-accounts", usdBody(w.theirs.customer.ID, "000000000098"), h), 400, "INVALID_INPUT")
	// The agent's own: customerId inferred.
	cr := e.do("POST", "/agents/me/external-accounts", usdBody("", "000000000097"), h)
	e.mustStatus(cr, 201)
	var created wire.ExternalAccount
	cr.decode(t, &created)
	if created.CustomerID != w.mine.customer.ID {
		t.Fatalf("created for %s", created.CustomerID)
	}
	e.mustStatus(e.do("DELETE", "/agents/me/external-accounts/"+created.ID, nil, h), 204)
	if x := e.getAccount(created.ID); x.Status != "INACTIVE" {
		t.Fatalf("deleted account is %s", x.Status)
	}
	// accountInfo.paymentRails, as the customer's create takes it (before,
	// the agent's create refused it as an unknown field); bad rails are
	// named with every other problem.
	railed := usdBody("", "000000000096")
	railed["accountInfo"].(map[string]any)["paymentRails"] = []string{"RTP"}
	cr = e.do("POST", "/agents/me/external-accounts", railed, h)
	e.mustStatus(cr, 201)
	cr.decode(t, &created)
	if rails := created.AccountInfo["paymentRails"]; !reflect.DeepEqual(rails, []any{"RTP"}) {
		t.Fatalf("paymentRails %v", rails)
	}
	railed = usdBody(w.theirs.customer.ID, "000000000095")
	railed["accountInfo"].(map[string]any)["paymentRails"] = []string{"PIX"}
	r = wantRefusal(t, e.do("POST", "/agents/me/external-accounts", railed, h), 400, "INVALID_INPUT")
	if f := errorFields(r); f != "accountInfo.paymentRails,customerId" {
		t.Fatalf("fields %s", f)
	}
	// Query filters the agent may not use are named.
	r = wantRefusal(t, e.do("GET", "/agents/me/transactions?customerId="+w.theirs.customer.ID+"&reference=x&status=NOPE", nil, h), 400, "INVALID_INPUT")
	if f := errorFields(r); f != "customerId,reference,status" {
		t.Fatalf("fields %s", f)
	}
	got = idsOf(t, e.do("GET", "/agents/me/transactions?accountIdentifier="+w.theirs.account.ID, nil, h), func(x wire.Transaction) string { return x.ID })
	if len(got) != 0 {
		t.Fatalf("another customer's account's transactions: %v", got)
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func errorFields(e wire.Error) string {
	var fields []string
	errs, _ := e.Details["errors"].([]any)
	for _, fe := range errs {
		fields = append(fields, fe.(map[string]any)["field"].(string))
	}
	slices.Sort(fields)
	return strings.Join(fields, ",")
}

// TestAgentAllowList: with accountRestrictions.allowedAccountIds, only the
// accounts on it (internal and external) are listed and usable; others
// look missing.
func TestAgentAllowList(t *testing.T) {
	w := newAgentWorld(t)
	e := w.e
	pol := policy(allPermissions...)
	pol["accountRestrictions"] = map[string]any{"allowedAccountIds": []string{w.mine.account.ID, w.myDest.ID}}
	_, token := e.connectAgent(w.mine.customer.ID, pol)
	h := bearer(token)
	got := idsOf(t, e.do("GET", "/agents/me/external-accounts", nil, h), func(a wire.ExternalAccount) string { return a.ID })
	if !slices.Equal(got, []string{w.myDest.ID}) {
		t.Fatalf("external accounts %v", got)
	}
	missing := e.do("GET", "/agents/me/external-accounts/ExternalAccount:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b", nil, h)
	off := e.do("GET", "/agents/me/external-accounts/"+w.myDest2.ID, nil, h)
	if off.status != 404 || string(off.body) != string(missing.body) {
		t.Fatalf("account off the allow-list: %d %s", off.status, off.body)
	}
	r := wantRefusal(t, e.do("POST", "/agents/me/quotes", quoteBody(w.mine, w.myDest2.ID, "SENDING", 1000), h), 400, "INVALID_INPUT")
	if errorFields(r) != "destination.accountId" {
		t.Fatalf("%s", errorFields(r))
	}
	q := w.agentQuote(token, w.myDest.ID, 1000)
	e.mustStatus(w.agentExecute(token, q), 200)
	// myTx paid myDest2 from the wallet: it touches the allowed wallet.
	got = idsOf(t, e.do("GET", "/agents/me/transactions", nil, h), func(x wire.Transaction) string { return x.ID })
	if !slices.Contains(got, q.TransactionID) || !slices.Contains(got, w.myTx) {
		t.Fatalf("transactions %v", got)
	}

	// Allowed: only the destination. The wallet is then out of reach.
	pol = policy(allPermissions...)
	pol["accountRestrictions"] = map[string]any{"allowedAccountIds": []string{w.myDest.ID}}
	_, narrow := e.connectAgent(w.mine.customer.ID, pol)
	got = idsOf(t, e.do("GET", "/agents/me/internal-accounts", nil, bearer(narrow)), func(a wire.InternalAccount) string { return a.ID })
	if len(got) != 0 {
		t.Fatalf("internal accounts %v", got)
	}
	got = idsOf(t, e.do("GET", "/agents/me/transactions", nil, bearer(narrow)), func(x wire.Transaction) string { return x.ID })
	if !slices.Equal(got, sorted([]string{q.TransactionID, w.myPlatformQuote.TransactionID})) {
		t.Fatalf("transactions %v (want only those to the allowed destination)", got)
	}
	if r := e.do("GET", "/agents/me/transactions/"+w.myTx, nil, bearer(narrow)); r.status != 404 {
		t.Fatalf("transaction off the allow-list: %d", r.status)
	}
	r = wantRefusal(t, e.do("POST", "/agents/me/quotes", quoteBody(w.mine, w.myDest.ID, "SENDING", 1000), bearer(narrow)), 400, "INVALID_INPUT")
	if errorFields(r) != "source.accountId" {
		t.Fatalf("%s", errorFields(r))
	}
	// Nothing allowed at all.
	pol["accountRestrictions"] = map[string]any{"allowedAccountIds": []string{}}
	_, none := e.connectAgent(w.mine.customer.ID, pol)
	got = idsOf(t, e.do("GET", "/agents/me/external-accounts", nil, bearer(none)), func(a wire.ExternalAccount) string { return a.ID })
	if len(got) != 0 {
		t.Fatalf("external accounts %v", got)
	}
}

// TestAgentQuoteAndExecute: the agent quotes and executes from the wallet;
// the execute needs the wallet owner's stamp, answers an APPROVED
// AgentAction with its transaction, and counts in the agent's usage.
func TestAgentQuoteAndExecute(t *testing.T) {
	w := newAgentWorld(t)
	e := w.e
	a, token := e.connectAgent(w.mine.customer.ID, limits(policy(allPermissions...), "USD", 100_000, nil))
	h := bearer(token)
	q := w.agentQuote(token, w.myDest.ID, 5000)
	if q.Source.CustomerID != w.mine.customer.ID || payloadOf(t, q) == "" {
		t.Fatalf("quote %+v", q)
	}
	e.mustStatus(e.do("GET", "/agents/me/quotes/"+q.ID, nil, h), 200)
	before := e.account(w.mine.account.ID)

	// No stamp, a stamp by someone else, the sandbox literal: refused, nothing moves.
	wantRefusal(t, e.do("POST", "/agents/me/quotes/"+q.ID+"/execute", nil, h), 401, "WALLET_SIGNATURE_MISSING")
	other := bearer(token)
	other[wire.HeaderWalletSignature] = mustStamp(t, mustKey(t), payloadOf(t, q))
	wantRefusal(t, e.do("POST", "/agents/me/quotes/"+q.ID+"/execute", nil, other), 401, "WALLET_SIGNATURE_INVALID")
	if after := e.account(w.mine.account.ID); after.Balance.Amount != before.Balance.Amount {
		t.Fatal("a refused execute moved money")
	}
	// Another agent of the same customer does not see this quote.
	_, second := e.connectAgent(w.mine.customer.ID, policy(allPermissions...))
	if r := e.do("GET", "/agents/me/quotes/"+q.ID, nil, bearer(second)); r.status != 404 {
		t.Fatalf("another agent's quote: %d", r.status)
	}

	r := w.agentExecute(token, q, "Idempotency-Key", "exec-1")
	e.mustStatus(r, 200)
	var act struct {
		ID, AgentID, CustomerID, PlatformCustomerID, Status, Type string
		Quote                                                     *wire.Quote
		Transaction                                               *wire.Transaction
	}
	r.decode(t, &act)
	if !strings.HasPrefix(act.ID, "AgentAction:") || act.AgentID != a.ID || act.CustomerID != w.mine.customer.ID ||
		act.PlatformCustomerID == "" || act.Status != "APPROVED" || act.Type != "EXECUTE_QUOTE" ||
		act.Quote == nil || act.Quote.ID != q.ID || act.Transaction == nil || act.Transaction.Status != "PROCESSING" {
		t.Fatalf("action %s", r.body)
	}
	if after := e.account(w.mine.account.ID); after.Balance.Amount != before.Balance.Amount-q.TotalSendingAmount {
		t.Fatalf("balance %d, want %d", after.Balance.Amount, before.Balance.Amount-q.TotalSendingAmount)
	}
	// The same key replays; without it the quote is no longer PENDING.
	replay := w.agentExecute(token, q, "Idempotency-Key", "exec-1")
	if replay.status != 200 || string(replay.body) != string(r.body) {
		t.Fatalf("replay %d %s", replay.status, replay.body)
	}
	wantRefusal(t, w.agentExecute(token, q), 409, "INVALID_STATE_TRANSITION")

	// Usage, actions, the transaction.
	r = e.do("GET", "/agents/me", nil, h)
	var me struct {
		Usage struct{ DailyTransactionCount, DailySpend, MonthlySpend int64 }
	}
	r.decode(t, &me)
	if me.Usage.DailyTransactionCount != 1 || me.Usage.DailySpend != q.TotalSendingAmount || me.Usage.MonthlySpend != q.TotalSendingAmount {
		t.Fatalf("usage %s", r.body)
	}
	r = e.do("GET", "/agents/"+a.ID, nil, nil)
	if !strings.Contains(string(r.body), `"dailyTransactionCount":1`) {
		t.Fatalf("the platform's view of the agent: %s", r.body)
	}
	got := idsOf(t, e.do("GET", "/agents/me/actions", nil, h), func(x struct{ ID string }) string { return x.ID })
	if !slices.Equal(got, []string{act.ID}) {
		t.Fatalf("actions %v", got)
	}
	e.mustStatus(e.do("GET", "/agents/me/actions/"+act.ID, nil, h), 200)
	if r := e.do("GET", "/agents/me/actions/"+act.ID, nil, bearer(second)); r.status != 404 {
		t.Fatalf("another agent's action: %d", r.status)
	}
	wantRefusal(t, e.do("GET", "/agents/me/actions?status=MAYBE&limit=0", nil, h), 400, "INVALID_INPUT")
	e.mustStatus(e.do("GET", "/agents/me/transactions/"+q.TransactionID, nil, h), 200)
}

// TestAgentSpendingLimits: per-transaction limits refuse the quote, period
// limits the execute; refused executes move nothing and count nothing; the
// day rolls over at UTC midnight.
func TestAgentSpendingLimits(t *testing.T) {
	w := newAgentWorld(t)
	e := w.e
	overLimit := func(t *testing.T, r response, limit string) {
		t.Helper()
		er := wantRefusal(t, r, 403, "FORBIDDEN")
		if er.Details["reason"] != "SPENDING_LIMIT_EXCEEDED" || er.Details["limit"] != limit {
			t.Fatalf("refusal %s, want %s", r.body, limit)
		}
	}
	t.Run("per transaction", func(t *testing.T) {
		_, token := e.connectAgent(w.mine.customer.ID, limits(policy(allPermissions...), "USD", 5000, nil))
		overLimit(t, e.do("POST", "/agents/me/quotes", quoteBody(w.mine, w.myDest.ID, "SENDING", 5001), bearer(token)), "perTransactionLimit")
		got := idsOf(t, e.do("GET", "/agents/me/transactions?status=PENDING", nil, bearer(token)), func(x wire.Transaction) string { return x.ID })
		for _, id := range got {
			if id != w.myPlatformQuote.TransactionID {
				t.Fatalf("a refused quote was stored: %v", got)
			}
		}
		w.agentQuote(token, w.myDest.ID, 5000)
	})
	t.Run("account rule overrides", func(t *testing.T) {
		pol := limits(policy(allPermissions...), "USD", 5000, nil)
		pol["accountRestrictions"] = map[string]any{"accountRules": []map[string]any{{"accountId": w.mine.account.ID, "perTransactionLimit": 2000}}}
		_, token := e.connectAgent(w.mine.customer.ID, pol)
		overLimit(t, e.do("POST", "/agents/me/quotes", quoteBody(w.mine, w.myDest.ID, "SENDING", 3000), bearer(token)), "perTransactionLimit")
	})
	t.Run("daily and monthly", func(t *testing.T) {
		_, token := e.connectAgent(w.mine.customer.ID, limits(policy(allPermissions...), "USD", 10_000,
			map[string]any{"dailyLimit": 10_000, "monthlyLimit": 15_000}))
		q1, q2 := w.agentQuote(token, w.myDest.ID, 6000), w.agentQuote(token, w.myDest.ID, 6000)
		e.mustStatus(w.agentExecute(token, q1), 200)
		before := e.account(w.mine.account.ID)
		overLimit(t, w.agentExecute(token, q2), "dailyLimit")
		if after := e.account(w.mine.account.ID); after.Balance.Amount != before.Balance.Amount {
			t.Fatal("a refused execute moved money")
		}
		if x := e.transaction(q2.TransactionID); x.Status != "PENDING" {
			t.Fatalf("refused execute left the transaction %s", x.Status)
		}
		e.clock.Advance(12 * time.Hour) // 2026-11-23 00:00 UTC: a new day, the same month
		e.login(w.mine.wallet, w.mine.key)
		q3, q4 := w.agentQuote(token, w.myDest.ID, 6000), w.agentQuote(token, w.myDest.ID, 9001)
		overLimit(t, w.agentExecute(token, q4), "monthlyLimit") // 6000 + 9001 > 15000 (and 9001 ≤ the daily 10000)
		e.mustStatus(w.agentExecute(token, q3), 200)
	})
	t.Run("daily transaction count", func(t *testing.T) {
		_, token := e.connectAgent(w.mine.customer.ID, limits(policy(allPermissions...), "USD", 10_000,
			map[string]any{"dailyTransactionLimit": 1}))
		q1, q2 := w.agentQuote(token, w.myDest.ID, 100), w.agentQuote(token, w.myDest.ID, 100)
		e.mustStatus(w.agentExecute(token, q1), 200)
		overLimit(t, w.agentExecute(token, q2), "dailyTransactionLimit")
	})
	t.Run("another currency", func(t *testing.T) {
		// 1 EUR costs more than 1 USD: 5000 USD cents are fewer EUR cents.
		_, token := e.connectAgent(w.mine.customer.ID, limits(policy(allPermissions...), "EUR", 4000, nil))
		overLimit(t, e.do("POST", "/agents/me/quotes", quoteBody(w.mine, w.myDest.ID, "SENDING", 5000), bearer(token)), "perTransactionLimit")
		_, token = e.connectAgent(w.mine.customer.ID, limits(policy(allPermissions...), "EUR", 5000, nil))
		q := w.agentQuote(token, w.myDest.ID, 5000)
		e.mustStatus(w.agentExecute(token, q), 200)
		r := e.do("GET", "/agents/me", nil, bearer(token))
		var me struct{ Usage struct{ DailySpend int64 } }
		r.decode(t, &me)
		if me.Usage.DailySpend <= 3000 || me.Usage.DailySpend >= 5000 {
			t.Fatalf("5000 USD cents counted as %d EUR cents", me.Usage.DailySpend)
		}
	})
	t.Run("concurrent executes cannot overrun", func(t *testing.T) {
		_, token := e.connectAgent(w.mine.customer.ID, limits(policy(allPermissions...), "USD", 10_000,
			map[string]any{"dailyLimit": 7000}))
		var qs []wire.Quote
		for range 4 {
			qs = append(qs, w.agentQuote(token, w.myDest.ID, 3000))
		}
		var ok atomic.Int32
		var wg sync.WaitGroup
		for _, q := range qs {
			wg.Go(func() {
				if w.agentExecute(token, q).status == 200 {
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		if ok.Load() != 2 {
			t.Fatalf("%d executes of 3000 passed a daily limit of 7000", ok.Load())
		}
	})
}

// TestAgentApprovalRequired: when the policy requires the platform's
// approval, the execute waits for it (PENDING_APPROVAL) and nothing moves;
// an account rule can make the source AUTO; above approvalThresholds an
// AUTO policy waits too.
func TestAgentApprovalRequired(t *testing.T) {
	w := newAgentWorld(t)
	e := w.e
	needsApproval := func(r response) {
		t.Helper()
		e.mustStatus(r, http.StatusOK)
		decodeAction(t, r, "PENDING_APPROVAL")
	}
	pol := policy(allPermissions...)
	pol["defaultExecutionMode"] = "APPROVAL_REQUIRED"
	_, token := e.connectAgent(w.mine.customer.ID, pol)
	q := w.agentQuote(token, w.myDest.ID, 1000)
	needsApproval(w.agentExecute(token, q))
	if x := e.transaction(q.TransactionID); x.Status != "PENDING" {
		t.Fatalf("transaction %s", x.Status)
	}
	pol["accountRestrictions"] = map[string]any{"accountRules": []map[string]any{{"accountId": w.mine.account.ID, "executionMode": "AUTO"}}}
	_, token = e.connectAgent(w.mine.customer.ID, pol)
	q = w.agentQuote(token, w.myDest.ID, 1000)
	e.mustStatus(w.agentExecute(token, q), 200)

	pol = policy(allPermissions...)
	pol["approvalThresholds"] = map[string]any{"currency": "USD", "amount": 1500}
	_, token = e.connectAgent(w.mine.customer.ID, pol)
	small, large := w.agentQuote(token, w.myDest.ID, 1500), w.agentQuote(token, w.myDest.ID, 1501)
	needsApproval(w.agentExecute(token, large))
	e.mustStatus(w.agentExecute(token, small), 200)
}

// TestAgentOnPostgres runs the agent's money path on PostgreSQL: quote,
// execute with usage counted in the execute's transaction, and the limits.
func TestAgentOnPostgres(t *testing.T) {
	w := newAgentWorld(t, onPostgres(t))
	e := w.e
	_, token := e.connectAgent(w.mine.customer.ID, limits(policy(allPermissions...), "USD", 10_000, map[string]any{"dailyLimit": 7000}))
	var qs []wire.Quote
	for range 3 {
		qs = append(qs, w.agentQuote(token, w.myDest.ID, 3000))
	}
	var ok atomic.Int32
	var wg sync.WaitGroup
	for _, q := range qs {
		wg.Go(func() {
			if w.agentExecute(token, q).status == 200 {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 2 {
		t.Fatalf("%d executes passed", ok.Load())
	}
	r := e.do("GET", "/agents/me/actions", nil, bearer(token))
	var l wire.List[json.RawMessage]
	r.decode(t, &l)
	if len(l.Data) != 2 {
		t.Fatalf("actions %s", r.body)
	}
}

// agentTransferAction is an AgentAction of a transfer as the tests read it.
type agentTransferAction struct {
	ID, AgentID, CustomerID, Status, Type string
	Quote                                 *wire.Quote
	TransferDetails                       *struct {
		Amount                                          int64
		Currency, SourceAccountID, DestinationAccountID string
	}
	Transaction *wire.Transaction
}

func decodeTransferAction(t *testing.T, r response, typ string, amount int64, source, destination string) agentTransferAction {
	t.Helper()
	var a agentTransferAction
	r.decode(t, &a)
	d := a.TransferDetails
	if !strings.HasPrefix(a.ID, "AgentAction:") || a.Status != "APPROVED" || a.Type != typ || a.Quote != nil || d == nil ||
		d.Amount != amount || d.Currency != "USD" || d.SourceAccountID != source || d.DestinationAccountID != destination ||
		a.Transaction == nil || a.Transaction.Status != "PENDING" || a.Transaction.Destination.AccountID != destination {
		t.Fatalf("%s action %s", typ, r.body)
	}
	return a
}

// TestAgentTransferIn: the agent pulls into its customer's account; the
// answer is the APPROVED TRANSFER_IN action with the PENDING transaction,
// which settles as the customer's; the amount counts in the usage; the
// Idempotency-Key replays.
func TestAgentTransferIn(t *testing.T) {
	w := newAgentWorld(t)
	e := w.e
	a, token := e.connectAgent(w.mine.customer.ID, limits(policy("CREATE_TRANSFERS"), "USD", 100_000, nil))
	h := bearer(token)
	h[wire.HeaderIdempotencyKey] = "in-1"
	before := e.account(w.mine.account.ID)
	r := e.do("POST", "/agents/me/transfer-in", transferInBody(w.myDest.ID, w.mine.account.ID, 2_500), h)
	e.mustStatus(r, http.StatusCreated)
	act := decodeTransferAction(t, r, "TRANSFER_IN", 2_500, w.myDest.ID, w.mine.account.ID)
	if act.AgentID != a.ID || act.CustomerID != w.mine.customer.ID || act.Transaction.Type != "INCOMING" {
		t.Fatalf("action %s", r.body)
	}
	again := e.do("POST", "/agents/me/transfer-in", transferInBody(w.myDest.ID, w.mine.account.ID, 2_500), h)
	if again.status != http.StatusCreated || string(again.body) != string(r.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay %d %s", again.status, again.body)
	}
	wantRefusal(t, e.do("POST", "/agents/me/transfer-in", transferInBody(w.myDest.ID, w.mine.account.ID, 2_501), h), 409, "CONFLICT")
	// The key is the agent's: the platform's transfer-in with it is another request.
	e.mustStatus(e.do("POST", "/transfer-in", transferInBody(w.myDest.ID, w.mine.account.ID, 100), map[string]string{wire.HeaderIdempotencyKey: "in-1"}), http.StatusCreated)

	e.settle()
	e.clock.Advance(time.Minute)
	e.settle()
	if x := e.transaction(act.Transaction.ID); x.Status != "COMPLETED" {
		t.Fatalf("settled %+v", x)
	}
	if after := e.account(w.mine.account.ID); after.Balance.Amount != before.Balance.Amount+2_600 {
		t.Fatalf("balance %d, want %d", after.Balance.Amount, before.Balance.Amount+2_600)
	}
	var me struct {
		Usage struct{ DailyTransactionCount, DailySpend int64 }
	}
	e.do("GET", "/agents/me", nil, bearer(token)).decode(t, &me)
	if me.Usage.DailyTransactionCount != 1 || me.Usage.DailySpend != 2_500 {
		t.Fatalf("usage %+v", me.Usage)
	}
	got := idsOf(t, e.do("GET", "/agents/me/actions", nil, bearer(token)), func(x struct{ ID string }) string { return x.ID })
	if !slices.Equal(got, []string{act.ID}) {
		t.Fatalf("actions %v", got)
	}
	r = e.do("GET", "/agents/me/actions/"+act.ID, nil, bearer(token))
	decodeTransferAction(t, response{status: r.status, body: []byte(strings.Replace(string(r.body), `"status":"COMPLETED"`, `"status":"PENDING"`, 1))},
		"TRANSFER_IN", 2_500, w.myDest.ID, w.mine.account.ID)
}

// TestAgentTransferRefusals: every bad field is named; another customer's
// accounts and accounts off the allow-list are answered as missing ones;
// limits and approval refuse; nothing is stored or counted.
func TestAgentTransferRefusals(t *testing.T) {
	w := newAgentWorld(t)
	e := w.e
	_, token := e.connectAgent(w.mine.customer.ID, limits(policy("CREATE_TRANSFERS", "VIEW_TRANSACTIONS"), "USD", 5_000,
		map[string]any{"dailyLimit": 8_000}))
	h := bearer(token)
	noExt, noInt := "ExternalAccount:01900000-0000-7000-8000-000000000001", "InternalAccount:01900000-0000-7000-8000-000000000001"
	fields := func(r response) string {
		t.Helper()
		return errorFields(wantRefusal(t, r, 400, "INVALID_INPUT"))
	}
	transactionsBefore := idsOf(t, e.do("GET", "/agents/me/transactions?limit=100", nil, h), func(x wire.Transaction) string { return x.ID })
	cases := []struct {
		name, path string
		body       any
		want       string
	}{
		{"in: empty", "/agents/me/transfer-in", map[string]any{}, "amount,destination,source"},
		{"in: bad ids and amount", "/agents/me/transfer-in", map[string]any{"source": map[string]any{"accountId": "x"},
			"destination": map[string]any{"accountId": "y"}, "amount": 0}, "amount,destination.accountId,source.accountId"},
		{"in: another customer's", "/agents/me/transfer-in", transferInBody(w.theirDest.ID, w.theirs.account.ID, 100), "destination.accountId,source.accountId"},
		{"in: missing", "/agents/me/transfer-in", transferInBody(noExt, noInt, 100), "destination.accountId"},
		{"out: empty", "/agents/me/transfer-out", map[string]any{}, "amount,destination,source"},
		{"out: another customer's", "/agents/me/transfer-out", transferOutBody(w.theirs.account.ID, w.theirDest.ID, 100), "destination.accountId,source.accountId"},
		{"out: my wallet, their destination", "/agents/me/transfer-out", transferOutBody(w.mine.account.ID, w.theirDest.ID, 100), "destination.accountId"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := fields(e.do("POST", c.path, c.body, h)); got != c.want {
				t.Fatalf("fields %q, want %q", got, c.want)
			}
		})
	}
	// Another customer's ids read exactly as missing ones.
	theirs := e.do("POST", "/agents/me/transfer-out", transferOutBody(w.mine.account.ID, w.theirDest.ID, 100), h)
	missing := e.do("POST", "/agents/me/transfer-out", transferOutBody(w.mine.account.ID, noExt, 100), h)
	if string(theirs.body) != string(missing.body) {
		t.Fatalf("another customer's account %s, a missing one %s", theirs.body, missing.body)
	}

	// The allow-list.
	pol := limits(policy("CREATE_TRANSFERS"), "USD", 5_000, nil)
	pol["accountRestrictions"] = map[string]any{"allowedAccountIds": []string{w.mine.account.ID, w.myDest2.ID}}
	_, listed := e.connectAgent(w.mine.customer.ID, pol)
	if got := fields(e.do("POST", "/agents/me/transfer-in", transferInBody(w.myDest.ID, w.mine.account.ID, 100), bearer(listed))); got != "source.accountId" {
		t.Fatalf("off the allow-list: %q", got)
	}
	e.mustStatus(e.do("POST", "/agents/me/transfer-in", transferInBody(w.myDest2.ID, w.mine.account.ID, 100), bearer(listed)), http.StatusCreated)

	// Limits: per transaction, then the day.
	over := func(r response, limit string) {
		t.Helper()
		er := wantRefusal(t, r, 403, "FORBIDDEN")
		if er.Details["reason"] != "SPENDING_LIMIT_EXCEEDED" || er.Details["limit"] != limit {
			t.Fatalf("refusal %s, want %s", r.body, limit)
		}
	}
	over(e.do("POST", "/agents/me/transfer-in", transferInBody(w.myDest.ID, w.mine.account.ID, 5_001), h), "perTransactionLimit")
	// From the wallet the limit refuses before any challenge is issued.
	over(e.do("POST", "/agents/me/transfer-out", transferOutBody(w.mine.account.ID, w.myDest.ID, 5_001), h), "perTransactionLimit")
	e.mustStatus(e.do("POST", "/agents/me/transfer-in", transferInBody(w.myDest.ID, w.mine.account.ID, 5_000), h), http.StatusCreated)
	over(e.do("POST", "/agents/me/transfer-in", transferInBody(w.myDest.ID, w.mine.account.ID, 3_001), h), "dailyLimit")
	e.mustStatus(e.do("POST", "/agents/me/transfer-in", transferInBody(w.myDest.ID, w.mine.account.ID, 3_000), h), http.StatusCreated)
	transactionsAfter := idsOf(t, e.do("GET", "/agents/me/transactions?limit=100", nil, h), func(x wire.Transaction) string { return x.ID })
	if len(transactionsAfter) != len(transactionsBefore)+3 { // two of this agent's, one of the allow-listed one's
		t.Fatalf("transactions %d before, %d after: a refusal stored one", len(transactionsBefore), len(transactionsAfter))
	}
	var me struct {
		Usage struct{ DailyTransactionCount, DailySpend int64 }
	}
	e.do("GET", "/agents/me", nil, h).decode(t, &me)
	if me.Usage.DailyTransactionCount != 2 || me.Usage.DailySpend != 8_000 {
		t.Fatalf("usage %+v", me.Usage)
	}

	// Approval: the transfer waits for the platform (TestAgentTransferApproval),
	// after the checks the transfer makes: bad accounts are still named.
	pol = policy("CREATE_TRANSFERS")
	pol["defaultExecutionMode"] = "APPROVAL_REQUIRED"
	_, approval := e.connectAgent(w.mine.customer.ID, pol)
	if got := fields(e.do("POST", "/agents/me/transfer-in", transferInBody(noExt, w.mine.account.ID, 100), bearer(approval))); got != "source.accountId" {
		t.Fatalf("pending transfer of a missing account: %q", got)
	}
	r := e.do("POST", "/agents/me/transfer-in", transferInBody(w.myDest.ID, w.mine.account.ID, 100), bearer(approval))
	e.mustStatus(r, http.StatusCreated)
	decodeAction(t, r, "PENDING_APPROVAL")
}

// TestAgentTransferOutWalletSigned: from the customer's embedded wallet the
// agent's transfer-out is a signed retry: 202 with the challenge (nothing
// held, nothing counted), every unsigned or wrongly signed retry refused,
// the owner's signed retry transfers once and answers the TRANSFER_OUT
// action; a fiat account pays at once.
func TestAgentTransferOutWalletSigned(t *testing.T) {
	w := newAgentWorld(t)
	e := w.e
	_, token := e.connectAgent(w.mine.customer.ID, limits(policy("CREATE_TRANSFERS"), "USD", 100_000, nil))
	body := transferOutBody(w.mine.account.ID, w.myDest.ID, 6_000)
	before := e.account(w.mine.account.ID)
	r := e.do("POST", "/agents/me/transfer-out", body, bearer(token))
	e.mustStatus(r, http.StatusAccepted)
	var ch wire.SignedRequestChallenge
	r.decode(t, &ch)
	if ch.RequestID == "" || !strings.Contains(ch.PayloadToSign, w.myDest.ID) || !strings.Contains(ch.PayloadToSign, `"amount":6000`) {
		t.Fatalf("challenge %s", r.body)
	}
	with := func(extra map[string]string) map[string]string {
		h := bearer(token)
		maps.Copy(h, extra)
		return h
	}
	good := mustStamp(t, w.mine.key, ch.PayloadToSign)
	for name, c := range map[string]struct {
		headers map[string]string
		code    string
	}{
		"no stamp": {map[string]string{wire.HeaderRequestID: ch.RequestID}, "WALLET_SIGNATURE_MISSING"},
		"stranger": {map[string]string{wire.HeaderWalletSignature: mustStamp(t, mustKey(t), ch.PayloadToSign), wire.HeaderRequestID: ch.RequestID}, "WALLET_SIGNATURE_INVALID"},
	} {
		if r := e.do("POST", "/agents/me/transfer-out", body, with(c.headers)); r.status != 401 || r.errorBody(t).Code != c.code {
			t.Fatalf("%s: %d %s, want %s", name, r.status, r.body, c.code)
		}
	}
	if a := e.account(w.mine.account.ID); a.Balance.Amount != before.Balance.Amount {
		t.Fatal("an unsigned transfer-out moved money")
	}
	var none wire.List[json.RawMessage]
	e.do("GET", "/agents/me/actions", nil, bearer(token)).decode(t, &none)
	if len(none.Data) != 0 {
		t.Fatalf("a challenge recorded an action: %d", len(none.Data))
	}
	signedH := with(map[string]string{wire.HeaderWalletSignature: good, wire.HeaderRequestID: ch.RequestID, wire.HeaderIdempotencyKey: "agent-out-1"})
	r = e.do("POST", "/agents/me/transfer-out", body, signedH)
	e.mustStatus(r, http.StatusCreated)
	act := decodeTransferAction(t, r, "TRANSFER_OUT", 6_000, w.mine.account.ID, w.myDest.ID)
	if act.Transaction.Type != "OUTGOING" {
		t.Fatalf("action %s", r.body)
	}
	again := e.do("POST", "/agents/me/transfer-out", body, signedH)
	if again.status != http.StatusCreated || string(again.body) != string(r.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay %d %s", again.status, again.body)
	}
	delete(signedH, wire.HeaderIdempotencyKey)
	if r := e.do("POST", "/agents/me/transfer-out", body, signedH); r.status != 401 {
		t.Fatalf("second use of the Request-Id: %d %s", r.status, r.body)
	}
	if a := e.account(w.mine.account.ID); a.Balance.Amount != before.Balance.Amount-6_000 {
		t.Fatalf("available %d, want %d", a.Balance.Amount, before.Balance.Amount-6_000)
	}

	// A fiat account of the customer needs no signature.
	fiat := e.fiatAccount(w.mine)
	e.fund(fiat, 10_000)
	r = e.do("POST", "/agents/me/transfer-out", transferOutBody(fiat, w.myDest.ID, 4_000), bearer(token))
	e.mustStatus(r, http.StatusCreated)
	decodeTransferAction(t, r, "TRANSFER_OUT", 4_000, fiat, w.myDest.ID)
	balances(t, e.account(fiat), 6_000, 10_000)
	wantRefusal(t, e.do("POST", "/agents/me/transfer-out", transferOutBody(fiat, w.myDest.ID, 7_000), bearer(token)), 400, "INSUFFICIENT_BALANCE")
}

// TestAgentTransfersConcurrent: concurrent transfers of one agent cannot
// overrun its daily limit together, on both databases.
func TestAgentTransfersConcurrent(t *testing.T) {
	onBothStores(t, func(t *testing.T, opts ...func(*Config)) {
		w := newAgentWorld(t, opts...)
		e := w.e
		_, token := e.connectAgent(w.mine.customer.ID, limits(policy("CREATE_TRANSFERS"), "USD", 10_000, map[string]any{"dailyLimit": 7_000}))
		fiat := e.fiatAccount(w.mine)
		e.fund(fiat, 50_000)
		var ok atomic.Int32
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				body := transferInBody(w.myDest.ID, w.mine.account.ID, 3_000)
				if i%2 == 1 {
					body = transferOutBody(fiat, w.myDest.ID, 3_000)
				}
				path := map[bool]string{true: "/agents/me/transfer-out", false: "/agents/me/transfer-in"}[i%2 == 1]
				if e.do("POST", path, body, bearer(token)).status == http.StatusCreated {
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		if ok.Load() != 2 {
			t.Fatalf("%d transfers of 3000 passed a daily limit of 7000", ok.Load())
		}
	})
}
