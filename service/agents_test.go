package service

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"paywallet/service/store/sqlstore"
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
			"policy.accountRestrictions.accountRules.0.accountId,policy.accountRestrictions.accountRules.0.executionMode," +
				"policy.accountRestrictions.accountRules.0.perTransactionLimit,policy.accountRestrictions.allowedAccountIds.0," +
				"policy.approvalThresholds.amount,policy.approvalThresholds.currency"},
		{"threshold without an amount", map[string]any{"customerId": w.customer.ID, "name": "n", "policy": noAmount}, "policy.approvalThresholds.amount"},
		{"everything wrong", map[string]any{"customerId": "x", "name": "", "policy": bad},
			"customerId,name,policy.defaultExecutionMode,policy.permissions.0,policy.spendingLimits"},
		{"unknown customer", map[string]any{"customerId": "Customer:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b", "name": "n", "policy": policy("VIEW_TRANSACTIONS")}, "customerId"},
		{"unknown policy field", map[string]any{"customerId": w.customer.ID, "name": "n", "policy": map[string]any{"permissions": []string{"VIEW_TRANSACTIONS"}, "mood": "happy"}}, "policy.mood"},
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
