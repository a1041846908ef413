package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"paywallet/service/payments"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/webhooksig"
	"paywallet/shared/wire"
)

// The OpenAPI document (openapi.yaml) cannot drift from the service:
// newEnv wraps every test service's handler in docValidator, which finds
// each request's operation in the document and checks the answer against
// it (every status, error bodies included) and, when the service accepted
// the request, the request too. TestDocumentCoversRouteTable keeps the
// document's operations and the route table the same set,
// TestDocumentMatchesRouteLines holds each operation to its route line and
// its Go types, and TestEveryDocumentedOperation drives each one through
// the validator.

// testDocument is the embedded document, loaded and validated once.
var testDocument = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := parseAPIDocument(openapiYAML)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml does not load: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi.yaml is not a valid OpenAPI document: %w", err)
	}
	return doc, nil
})

var testRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := testDocument()
	if err != nil {
		return nil, err
	}
	return gorillamux.NewRouter(doc)
})

// docValidator is a service handler checked against the document. It
// records the operations it served (seen), for the coverage test.
type docValidator struct {
	t      *testing.T
	h      http.Handler
	router routers.Router

	mu   sync.Mutex
	seen map[string]int // operationId -> requests answered
}

// validateAgainstDocument wraps h (a Service.Handler) in a docValidator that
// fails t on any request or answer the document does not allow.
func validateAgainstDocument(t *testing.T, h http.Handler) http.Handler {
	t.Helper()
	router, err := testRouter()
	if err != nil {
		t.Fatal(err)
	}
	return &docValidator{t: t, h: h, router: router, seen: map[string]int{}}
}

// coverageLog, when set, names a file that every docValidator appends the
// operationId of each request to (for finding which operations the suite
// reaches: OPENAPI_COVERAGE_LOG=/tmp/ops go test ./service/).
var coverageLog = os.Getenv("OPENAPI_COVERAGE_LOG")

var coverageMu sync.Mutex

func (v *docValidator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, wire.BasePath+"/") {
		v.h.ServeHTTP(w, r) // /healthz and the like are outside the interface
		return
	}
	var body []byte
	if r.Body != nil {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			v.t.Errorf("openapi validator: reading the request body: %v", err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	// The request as it came, for the validator: the handler may replace
	// the body of the one it serves.
	sent := r.Clone(r.Context())
	sent.Body = io.NopCloser(bytes.NewReader(body))

	rec := httptest.NewRecorder()
	v.h.ServeHTTP(rec, r)
	for k, vals := range rec.Header() {
		w.Header()[k] = vals
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())

	if err := v.check(sent, body, rec); err != nil {
		v.t.Errorf("openapi: %s %s answered %d: %v\nresponse body: %s", r.Method, r.URL.RequestURI(), rec.Code, err, truncate(rec.Body.Bytes()))
	}
}

func truncate(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// check validates one exchange against the document.
func (v *docValidator) check(req *http.Request, body []byte, rec *httptest.ResponseRecorder) error {
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		// A pair the document does not have is fine only if the service
		// does not serve it either.
		if (errors.Is(err, routers.ErrPathNotFound) && rec.Code == http.StatusNotFound) ||
			(errors.Is(err, routers.ErrMethodNotAllowed) && rec.Code == http.StatusMethodNotAllowed) {
			return nil
		}
		return fmt.Errorf("the document has no operation for it (%v)", err)
	}
	op := route.Operation.OperationID
	v.mu.Lock()
	v.seen[op]++
	v.mu.Unlock()
	if coverageLog != "" {
		coverageMu.Lock()
		if f, err := os.OpenFile(coverageLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, op, rec.Code)
			f.Close()
		}
		coverageMu.Unlock()
	}
	opts := &openapi3filter.Options{
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc, // the service checks credentials itself
		SkipSettingDefaults:   true,
		IncludeResponseStatus: true, // an undocumented status is a mismatch
		MultiError:            true,
		// Messages name the field and the rule, not the whole schema.
		SchemaValidationOptions: []openapi3.SchemaValidationOption{openapi3.DisableSchemaErrorDetails()},
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	var errs []string
	if rec.Code >= 200 && rec.Code < 300 {
		// Only a request the service accepted must be one the document
		// allows: refusing what the document forbids is the service's job.
		if err := openapi3filter.ValidateRequest(req.Context(), in); err != nil {
			errs = append(errs, "request: "+err.Error())
		}
	}
	if err := openapi3filter.ValidateResponse(req.Context(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 rec.Code,
		Header:                 rec.Header(),
		Body:                   io.NopCloser(bytes.NewReader(rec.Body.Bytes())),
		Options:                opts,
	}); err != nil {
		errs = append(errs, "response: "+err.Error())
	}
	if rec.Code >= 400 {
		// The error body's status is the HTTP status (a schema cannot say).
		var e wire.Error
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Status != rec.Code {
			errs = append(errs, fmt.Sprintf("error body status is not %d", rec.Code))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("operation %s: %s", op, strings.Join(errs, "; "))
	}
	return nil
}

// seenOperations is what a docValidator served so far.
func (v *docValidator) seenOperations() map[string]int {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make(map[string]int, len(v.seen))
	for k, n := range v.seen {
		out[k] = n
	}
	return out
}

// documentOperations is every (method, path) of the document, with its
// operationId.
func documentOperations(t *testing.T) map[string]string {
	t.Helper()
	doc, err := testDocument()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			out[method+" "+path] = op.OperationID
		}
	}
	return out
}

func TestDocumentIsValid(t *testing.T) {
	doc, err := testDocument()
	if err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi %q, want 3.0.3", doc.OpenAPI)
	}
	if doc.Info.Version != wire.Version {
		t.Errorf("info.version %q, want %q", doc.Info.Version, wire.Version)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != wire.BasePath {
		t.Errorf("servers must be the one base path %s", wire.BasePath)
	}
	ids := map[string]string{}
	for key, id := range documentOperations(t) {
		if id == "" {
			t.Errorf("%s has no operationId", key)
		}
		if other, dup := ids[id]; dup {
			t.Errorf("operationId %s is used by %s and %s", id, key, other)
		}
		ids[id] = key
	}
}

// TestDocumentCoversRouteTable: the route table and the document list the
// same operations, and each one's security is the route's credential.
func TestDocumentCoversRouteTable(t *testing.T) {
	e := newEnv(t)
	doc, _ := testDocument()
	documented := documentOperations(t)
	served := map[string]bool{}
	for _, rt := range e.svc.routes() {
		key := rt.method + " " + rt.path
		served[key] = true
		if _, ok := documented[key]; !ok {
			t.Errorf("%s is served but not in openapi.yaml", key)
			continue
		}
		op := doc.Paths.Value(rt.path).GetOperation(rt.method)
		sec := doc.Security
		if op.Security != nil {
			sec = *op.Security
		}
		var schemes []string
		for _, req := range sec {
			for name := range req {
				schemes = append(schemes, name)
			}
		}
		sort.Strings(schemes)
		var want []string
		switch rt.auth {
		case authPlatform, authSandbox:
			want = []string{"PlatformBasic"}
		case authAgent:
			want = []string{"AgentBearer"}
		case authNone:
			want = nil
		}
		if !slices.Equal(schemes, want) {
			t.Errorf("%s: document security %v, route credential %v", key, schemes, want)
		}
		// Every operation with a credential documents its refusal.
		if want != nil && op.Responses.Status(http.StatusUnauthorized) == nil {
			t.Errorf("%s: no 401 answer documented", key)
		}
		if rt.auth == authSandbox && op.Responses.Status(http.StatusForbidden) == nil {
			t.Errorf("%s: sandbox-only, but no 403 answer documented", key)
		}
		// An API token without the route's permission is refused 403.
		if rt.auth == authPlatform && op.Responses.Status(http.StatusForbidden) == nil {
			t.Errorf("%s: a token may lack its permission, but no 403 answer documented", key)
		}
	}
	for key := range documented {
		if !served[key] {
			t.Errorf("%s is in openapi.yaml but not in the route table", key)
		}
	}
}

// TestDocumentErrorCodes: every code of the code-to-status table is one the
// document's error schema for that status allows, and each status's schema
// allows no code the service does not answer with it.
func TestDocumentErrorCodes(t *testing.T) {
	doc, err := testDocument()
	if err != nil {
		t.Fatal(err)
	}
	byStatus := map[int][]string{}
	for code, status := range statusOf {
		byStatus[status] = append(byStatus[status], code)
	}
	// The HTTP layer's own answers with a shared code.
	byStatus[http.StatusRequestEntityTooLarge] = append(byStatus[http.StatusRequestEntityTooLarge], "INVALID_REQUEST_FORMAT")
	byStatus[http.StatusUnsupportedMediaType] = append(byStatus[http.StatusUnsupportedMediaType], "INVALID_REQUEST_FORMAT")
	for status, codes := range byStatus {
		if status == http.StatusMethodNotAllowed {
			continue // answered for paths, not operations
		}
		name := fmt.Sprintf("Error%d", status)
		ref := doc.Components.Schemas[name]
		if ref == nil {
			t.Errorf("statusOf answers %d but the document has no %s schema", status, name)
			continue
		}
		var enum []string
		for _, part := range ref.Value.AllOf {
			if c := part.Value.Properties["code"]; c != nil {
				for _, v := range c.Value.Enum {
					enum = append(enum, v.(string))
				}
			}
		}
		sort.Strings(enum)
		sort.Strings(codes)
		if !slices.Equal(enum, codes) {
			t.Errorf("%s codes %v, the service answers %d with %v", name, enum, status, codes)
		}
	}
}

func TestDocumentServed(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ path, ctype string }{
		{"/openapi.json", "application/json"},
		{"/openapi.yaml", "application/yaml"},
	} {
		r := e.do("GET", tc.path, nil, map[string]string{"Authorization": ""})
		e.mustStatus(r, http.StatusOK)
		if got := r.header.Get("Content-Type"); got != tc.ctype {
			t.Errorf("%s: Content-Type %q, want %q", tc.path, got, tc.ctype)
		}
		if got := r.header.Get("Cache-Control"); got != "public, max-age=300" {
			t.Errorf("%s: Cache-Control %q", tc.path, got)
		}
		doc, err := parseAPIDocument(r.body)
		if err != nil {
			t.Fatalf("%s does not load: %v", tc.path, err)
		}
		if err := doc.Validate(context.Background()); err != nil {
			t.Errorf("%s is not valid: %v", tc.path, err)
		}
		if doc.Paths.Len() != len(documentPaths(t)) {
			t.Errorf("%s has %d paths, want %d", tc.path, doc.Paths.Len(), len(documentPaths(t)))
		}
		tag := r.header.Get("ETag")
		if tag == "" {
			t.Fatalf("%s: no ETag", tc.path)
		}
		r = e.do("GET", tc.path, nil, map[string]string{"Authorization": "", "If-None-Match": tag})
		e.mustStatus(r, http.StatusNotModified)
		if len(r.body) != 0 {
			t.Errorf("%s: 304 with a body", tc.path)
		}
	}
	// Both forms say the same thing.
	j := e.do("GET", "/openapi.json", nil, nil)
	y := e.do("GET", "/openapi.yaml", nil, nil)
	dj, _ := parseAPIDocument(j.body)
	dy, _ := parseAPIDocument(y.body)
	bj, _ := json.Marshal(dj)
	by, _ := json.Marshal(dy)
	if !bytes.Equal(bj, by) {
		t.Error("the JSON and YAML documents differ")
	}
}

func documentPaths(t *testing.T) []string {
	doc, err := testDocument()
	if err != nil {
		t.Fatal(err)
	}
	return doc.Paths.InMatchingOrder()
}

// TestEveryDocumentedOperation drives every operation of the document
// through the validator, each at least once with its success answer, and
// fails if one was not reached: a new operation needs a step here.
func TestEveryDocumentedOperation(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	iss, trust := withIssuer(t, clk)
	rc := newReceiver(t)
	e := newEnv(t, sandbox, trust, withWebhooks(rc), func(c *Config) { c.Now = clk.Now; c.WalletURL = "https://wallet.example" })
	e.clock = clk
	rc.attach(e)
	noAuth := map[string]string{"Authorization": ""}
	ok := func(method, path string, body any, headers map[string]string, want int) response {
		t.Helper()
		r := e.do(method, path, body, headers)
		e.mustStatus(r, want)
		return r
	}

	// The document, the platform, the public keys, reference data.
	ok("GET", "/openapi.json", nil, noAuth, http.StatusOK)
	ok("GET", "/openapi.yaml", nil, noAuth, http.StatusOK)
	ok("GET", "/config", nil, nil, http.StatusOK)
	ok("PATCH", "/config", map[string]any{"webhookEndpoint": rc.url()}, nil, http.StatusOK)
	ok("GET", "/webhooks/jwks.json", nil, noAuth, http.StatusOK)
	ok("GET", "/discoveries?country=PH&currency=PHP", nil, nil, http.StatusOK)
	ok("GET", "/exchange-rates?sourceCurrency=USD&destinationCurrency=EUR&destinationCurrency=MXN&sendingAmount=5000", nil, nil, http.StatusOK)

	// A customer with a wallet, signed in by e-mail code, funded.
	p := e.newPayer("every-op@example.com", 500_000)
	ok("GET", "/customers?customerType=INDIVIDUAL&limit=10", nil, nil, http.StatusOK)
	ok("GET", "/customers/"+p.customer.ID, nil, nil, http.StatusOK)
	ok("PATCH", "/customers/"+p.customer.ID, map[string]any{"customerType": "INDIVIDUAL", "fullName": "Every Operation",
		"phoneNumber": "+14155551234", "birthDate": "1990-04-01", "nationality": "US", "idType": "SSN", "identifier": "123-45-6789",
		"address":          map[string]any{"line1": "1 Market St", "city": "San Francisco", "postalCode": "94105", "country": "US"},
		"purposeOfAccount": "OTHER", "purposeOfAccountOtherDescription": "Family remittances",
		"endUserTermsConsent": map[string]any{"acceptedAt": "2026-11-22T11:00:00Z", "ipAddress": "203.0.113.7", "termsVersion": "V1", "acceptanceMethod": "CHECKBOX"},
	}, nil, http.StatusOK)

	// A business customer with no money, deleted, then listed with the
	// deleted ones.
	var biz wire.Customer
	ok("POST", "/customers", map[string]any{"customerType": "BUSINESS", "region": "US", "currencies": []string{"USD"},
		"businessInfo": map[string]any{"legalName": "Every Op LLC", "country": "US", "taxId": "12-3456789", "incorporatedOn": "2020-01-15",
			"entityType": "LLC", "registrationNumber": "REG-004", "sourceOfFundsCategories": []string{"OPERATING_REVENUE"}},
	}, nil, http.StatusCreated).decode(t, &biz)
	ok("DELETE", "/customers/"+biz.ID, nil, nil, http.StatusOK)
	ok("GET", "/customers?isIncludingDeleted=true&customerType=BUSINESS", nil, nil, http.StatusOK)

	// Signed retries of the wallet.
	signedOK := func(method, path string, body any, key *walletcrypto.PrivateKey, want int) response {
		t.Helper()
		ch := e.firstLeg(method, path, body)
		e.confirmHeld(ch, p.email)
		return ok(method, path, body, signed(mustStamp(t, key, ch.PayloadToSign), ch.RequestID), want)
	}
	signedOK("PATCH", "/internal-accounts/"+p.account.ID, map[string]any{"privateEnabled": true}, p.key, http.StatusOK)
	signedOK("POST", "/internal-accounts/"+p.account.ID+"/export", map[string]any{"clientPublicKey": mustKey(t).PublicKey().UncompressedHex()}, p.key, http.StatusOK)
	// The wallet's limits: one applied at once, one pending (limits_test.go).
	signedOK("PATCH", "/internal-accounts/"+p.account.ID+"/limits", map[string]any{"perPayment": 400_000, "daily": nil}, p.key, http.StatusOK)
	signedOK("PATCH", "/internal-accounts/"+p.account.ID+"/limits", map[string]any{"perPayment": nil, "newRecipientCoolingOffHours": 0}, p.key, http.StatusOK)
	ok("GET", "/internal-accounts/"+p.account.ID+"/limits", nil, nil, http.StatusOK)
	cred := e.addOAuth(p.wallet, p.key, iss, "every-op.person@example.com")
	signedOK("DELETE", "/auth/credentials/"+cred.ID, nil, p.key, http.StatusNoContent)
	ok("GET", "/auth/sessions?accountId="+p.account.ID, nil, nil, http.StatusOK)
	sessions := e.activeSessionIDs(p.account.ID)
	if len(sessions) != 1 {
		t.Fatalf("sessions %v", sessions)
	}
	next := mustKey(t)
	var fresh wire.Session
	signedOK("POST", "/auth/sessions/"+sessions[0]+"/refresh", map[string]any{"clientPublicKey": next.PublicKey().CompressedHex()}, p.key, http.StatusCreated).decode(t, &fresh)

	// External accounts: the customer's and the platform's.
	dest := e.destination(p, "00011")
	ok("GET", "/customers/external-accounts?customerId="+p.customer.ID+"&currency=USD", nil, nil, http.StatusOK)
	platformBody := usdBody(p.customer.ID, "000000000021")
	delete(platformBody, "customerId")
	var platformAccount wire.ExternalAccount
	ok("POST", "/platform/external-accounts", platformBody, nil, http.StatusCreated).decode(t, &platformAccount)
	ok("GET", "/platform/external-accounts?limit=5", nil, nil, http.StatusOK)
	ok("GET", "/platform/external-accounts/"+platformAccount.ID, nil, nil, http.StatusOK)
	ok("DELETE", "/platform/external-accounts/"+platformAccount.ID, nil, nil, http.StatusNoContent)
	ok("GET", "/platform/internal-accounts", nil, nil, http.StatusOK)
	ok("GET", "/customers/external-accounts?limit=5", nil, nil, http.StatusOK)
	railed := usdBody(p.customer.ID, "000000000031")
	railed["accountInfo"].(map[string]any)["paymentRails"] = []string{"RTP", "ACH"}
	ok("POST", "/customers/external-accounts", railed, nil, http.StatusCreated)

	// A payment after a receiver lookup, signed by the refreshed session's
	// key.
	var lookup wire.ReceiverExternalAccountLookup
	ok("GET", "/receiver/external-account/"+dest.ID+"?customerId="+p.customer.ID, nil, nil, http.StatusOK).decode(t, &lookup)
	qb := quoteBody(p, dest.ID, "SENDING", 10_000)
	qb["lookupId"] = lookup.LookupID
	q := e.quote(qb)
	ok("GET", "/quotes/"+q.ID, nil, nil, http.StatusOK)
	e.mustStatus(e.execute(q, mustStamp(t, next, payloadOf(t, q)), wire.HeaderIdempotencyKey, "every-op-1"), http.StatusOK)
	clk.Advance(time.Minute)
	e.settle()
	ok("GET", "/transactions?customerId="+p.customer.ID+"&sortOrder=asc", nil, nil, http.StatusOK)
	ok("GET", "/transactions/"+q.TransactionID, nil, nil, http.StatusOK)
	ok("POST", "/transactions/"+q.TransactionID+"/confirm", nil, nil, http.StatusOK)

	// The books: the wallet's statement, the accounts, one ledger
	// transaction, the signed head before and after the sealer runs.
	var entries wire.List[wire.LedgerEntry]
	ok("GET", "/internal-accounts/"+p.account.ID+"/entries?limit=5&sortOrder=desc&createdAfter=2026-11-22T00:00:00Z&createdBefore=2026-11-23T00:00:00Z", nil, nil, http.StatusOK).decode(t, &entries)
	if len(entries.Data) == 0 {
		t.Fatal("no ledger entries")
	}
	ok("GET", "/ledger/accounts", nil, nil, http.StatusOK)
	ok("GET", "/ledger/transactions/"+entries.Data[0].LedgerTransactionID, nil, nil, http.StatusOK)
	ok("GET", "/ledger/head", nil, nil, http.StatusOK)
	e.seal()
	ok("GET", "/ledger/transactions/"+entries.Data[0].LedgerTransactionID, nil, nil, http.StatusOK)
	ok("GET", "/ledger/head", nil, nil, http.StatusOK)

	// A payment funded just in time: quoted, then its funds arrive.
	rt := e.quote(realtimeBody(p, "USD", dest.ID, "SENDING", 3_000))
	ok("POST", "/sandbox/send", map[string]any{"quoteId": rt.ID, "currencyCode": "USD"}, map[string]string{wire.HeaderIdempotencyKey: "every-op-send"}, http.StatusOK)

	// Same-currency transfers: in from the recipient's bank account, out
	// of the wallet with its signature.
	ok("POST", "/transfer-in", transferInBody(dest.ID, p.account.ID, 2_000), map[string]string{wire.HeaderIdempotencyKey: "every-op-in"}, http.StatusCreated)
	signedOK("POST", "/transfer-out", transferOutBody(p.account.ID, dest.ID, 1_000), next, http.StatusCreated)

	// An agent of the customer.
	agent, token := e.connectAgent(p.customer.ID, policy("VIEW_TRANSACTIONS", "CREATE_QUOTES", "EXECUTE_QUOTES", "MANAGE_EXTERNAL_ACCOUNTS", "CREATE_TRANSFERS"))
	ok("GET", "/agents/"+agent.ID, nil, nil, http.StatusOK)
	ok("PATCH", "/agents/"+agent.ID, map[string]any{"isPaused": false}, nil, http.StatusOK)
	var dc struct{ Code string }
	ok("POST", "/agents/"+agent.ID+"/device-codes", nil, nil, http.StatusCreated).decode(t, &dc)
	ok("GET", "/agents/device-codes/"+dc.Code+"/status", nil, nil, http.StatusOK)
	ok("GET", "/agents/me/external-accounts/"+dest.ID, nil, bearer(token), http.StatusOK)

	// The agent's own operations, with its bearer token.
	ok("GET", "/agents/me", nil, bearer(token), http.StatusOK)
	ok("GET", "/agents/me/internal-accounts", nil, bearer(token), http.StatusOK)
	ok("GET", "/agents/me/external-accounts?currency=USD", nil, bearer(token), http.StatusOK)
	agentBody := usdBody(p.customer.ID, "000000000041")
	delete(agentBody, "customerId")
	var agentAccount wire.ExternalAccount
	ok("POST", "/agents/me/external-accounts", agentBody, bearer(token), http.StatusCreated).decode(t, &agentAccount)
	ok("DELETE", "/agents/me/external-accounts/"+agentAccount.ID, nil, bearer(token), http.StatusNoContent)
	ok("GET", "/agents/me/transactions?sortOrder=asc", nil, bearer(token), http.StatusOK)
	ok("GET", "/agents/me/transactions/"+q.TransactionID, nil, bearer(token), http.StatusOK)
	var agentQuote wire.Quote
	ok("POST", "/agents/me/quotes", quoteBody(p, dest.ID, "SENDING", 5_000), bearer(token), http.StatusCreated).decode(t, &agentQuote)
	ok("GET", "/agents/me/quotes/"+agentQuote.ID, nil, bearer(token), http.StatusOK)
	executeHeaders := bearer(token)
	executeHeaders[wire.HeaderWalletSignature] = mustStamp(t, next, payloadOf(t, agentQuote))
	var action struct{ ID string }
	ok("POST", "/agents/me/quotes/"+agentQuote.ID+"/execute", nil, executeHeaders, http.StatusOK).decode(t, &action)
	ok("GET", "/agents/me/actions?status=APPROVED", nil, bearer(token), http.StatusOK)
	ok("GET", "/agents/me/actions/"+action.ID, nil, bearer(token), http.StatusOK)
	// The agent's transfers: in, and out of the wallet with the owner's
	// signature.
	var agentIn struct{ Transaction struct{ ID string } }
	ok("POST", "/agents/me/transfer-in", transferInBody(dest.ID, p.account.ID, 1_500), bearer(token), http.StatusCreated).decode(t, &agentIn)
	agentOut := transferOutBody(p.account.ID, dest.ID, 700)
	var agentChallenge wire.SignedRequestChallenge
	ok("POST", "/agents/me/transfer-out", agentOut, bearer(token), http.StatusAccepted).decode(t, &agentChallenge)
	agentSigned := bearer(token)
	maps.Copy(agentSigned, signed(mustStamp(t, next, agentChallenge.PayloadToSign), agentChallenge.RequestID))
	ok("POST", "/agents/me/transfer-out", agentOut, agentSigned, http.StatusCreated)
	// The platform cancels the agent's transfer-in before it settles.
	ok("POST", "/transactions/"+agentIn.Transaction.ID+"/cancel", map[string]any{"reason": "REQUESTED_AFTER_HOURS"}, nil, http.StatusOK)
	// The platform manages its agents: the list, a stricter policy under
	// which executes wait for its approval, one approved and one rejected,
	// and the agent deleted.
	ok("GET", "/agents?customerId="+p.customer.ID+"&isConnected=true", nil, nil, http.StatusOK)
	ok("PATCH", "/agents/"+agent.ID+"/policy", map[string]any{"defaultExecutionMode": "APPROVAL_REQUIRED"}, nil, http.StatusOK)
	var waiting [2]struct{ ID string }
	for i := range waiting {
		var wq wire.Quote
		ok("POST", "/agents/me/quotes", quoteBody(p, dest.ID, "SENDING", 1_000), bearer(token), http.StatusCreated).decode(t, &wq)
		h := bearer(token)
		h[wire.HeaderWalletSignature] = mustStamp(t, next, payloadOf(t, wq))
		ok("POST", "/agents/me/quotes/"+wq.ID+"/execute", nil, h, http.StatusOK).decode(t, &waiting[i])
	}
	ok("GET", "/agents/approvals?agentId="+agent.ID+"&sortOrder=asc", nil, nil, http.StatusOK)
	ok("POST", "/agents/"+agent.ID+"/actions/"+waiting[0].ID+"/approve", nil, map[string]string{wire.HeaderIdempotencyKey: "every-op-approve"}, http.StatusOK)
	ok("POST", "/agents/"+agent.ID+"/actions/"+waiting[1].ID+"/reject", map[string]any{"reason": "not today"}, nil, http.StatusOK)
	ok("DELETE", "/agents/"+agent.ID, nil, nil, http.StatusNoContent)

	// Incoming UMA payments: one approved, one rejected.
	umaBody := func() map[string]any {
		return map[string]any{"senderUmaAddress": "$success.usd@sandbox.uma.money", "customerId": p.customer.ID,
			"receivingCurrencyCode": "USD", "receivingCurrencyAmount": 1_000}
	}
	var umaIn, umaOther wire.Transaction
	ok("POST", "/sandbox/uma/receive", umaBody(), nil, http.StatusOK).decode(t, &umaIn)
	ok("POST", "/transactions/"+umaIn.ID+"/approve", map[string]any{"receiverCustomerInfo": map[string]any{"NATIONALITY": "US"}}, nil, http.StatusOK)
	ok("POST", "/sandbox/uma/receive", umaBody(), nil, http.StatusOK).decode(t, &umaOther)
	ok("POST", "/transactions/"+umaOther.ID+"/reject", map[string]any{"reason": "RESTRICTED_JURISDICTION"}, nil, http.StatusOK)
	ok("GET", "/receiver/uma/"+url.PathEscape(p.customer.UmaAddress)+"?customerId="+p.customer.ID, nil, nil, http.StatusOK)

	// Webhooks: the test event, endpoints, the events, the deliveries,
	// replays.
	ok("POST", "/sandbox/webhooks/test", nil, nil, http.StatusOK)
	ok("POST", "/sandbox/events/trigger", map[string]any{"type": "CUSTOMER.KYC_PENDING"}, nil, http.StatusAccepted)
	var ep payments.WebhookEndpoint
	ok("POST", "/webhooks/endpoints", map[string]any{"url": "http://127.0.0.1:9/second", "eventTypes": []string{"INTERNAL_ACCOUNT.BALANCE_UPDATED"},
		"payloadStyle": "thin", "description": "every op"}, nil, http.StatusCreated).decode(t, &ep)
	ok("GET", "/webhooks/endpoints", nil, nil, http.StatusOK)
	ok("PATCH", "/webhooks/endpoints/"+ep.ID, map[string]any{"enabled": false}, nil, http.StatusOK)
	ok("GET", "/webhooks/endpoints/"+ep.ID, nil, nil, http.StatusOK)
	ok("POST", "/webhooks/endpoints/"+ep.ID+"/replay", map[string]any{"from": "2020-01-01T00:00:00Z"}, nil, http.StatusOK)
	e.deliver()
	var events wire.List[webhooksig.Event]
	ok("GET", "/events?limit=2&type=INTERNAL_ACCOUNT.BALANCE_UPDATED", nil, nil, http.StatusOK).decode(t, &events)
	if len(events.Data) == 0 {
		t.Fatal("no events")
	}
	ok("GET", "/events/"+events.Data[0].ID, nil, nil, http.StatusOK)
	var deliveries wire.List[payments.WebhookDelivery]
	ok("GET", "/webhooks/deliveries?limit=1", nil, nil, http.StatusOK).decode(t, &deliveries)
	if len(deliveries.Data) == 0 {
		t.Fatal("no webhook deliveries")
	}
	ok("POST", "/webhooks/deliveries/"+deliveries.Data[0].EventID+"/replay", nil, nil, http.StatusOK)
	ok("DELETE", "/webhooks/endpoints/"+ep.ID, nil, nil, http.StatusNoContent)
	ok("POST", "/webhooks/keys/rotate", nil, nil, http.StatusOK)
	ok("GET", "/webhooks/keys", nil, nil, http.StatusOK)

	// API tokens, the End User Terms, the directory of the service itself.
	var tok payments.APIToken
	ok("POST", "/tokens", map[string]any{"name": "every-op reader", "permissions": []string{"VIEW"}}, nil, http.StatusCreated).decode(t, &tok)
	ok("GET", "/tokens?name=every-op+reader&limit=5", nil, nil, http.StatusOK)
	ok("GET", "/tokens/"+tok.ID, nil, basicAuth(tok.ClientID, tok.ClientSecret), http.StatusOK)
	ok("GET", "/customers/end-user-terms", nil, nil, http.StatusOK)
	ok("GET", "/uma-providers?currencyCode=USD&countryCode=US&hasBlockedProviders=true&sortOrder=asc&limit=10", nil, nil, http.StatusOK)
	ok("GET", "/vasps?limit=10", nil, nil, http.StatusOK)
	ok("DELETE", "/tokens/"+tok.ID, nil, nil, http.StatusNoContent)

	// Step-up: a payment above the policy's amount waits for the
	// person's e-mailed code, then an export does.
	ok("PATCH", "/config", map[string]any{"stepUpPolicy": map[string]any{"paymentsOver": map[string]any{"amount": 5_000, "currency": "USD"},
		"recoveryPhraseExport": true}}, nil, http.StatusOK)
	held := e.quote(quoteBody(p, dest.ID, "SENDING", 10_000))
	e.mustStatus(e.execute(held, mustStamp(t, next, payloadOf(t, held))), http.StatusOK)
	ok("GET", "/quotes/"+held.ID, nil, nil, http.StatusOK)
	ok("POST", "/quotes/"+held.ID+"/authorize/resend", nil, nil, http.StatusNoContent)
	ok("POST", "/quotes/"+held.ID+"/authorize", map[string]any{"code": "123456"}, nil, http.StatusOK)
	var exportChallenge wire.SignedRequestChallenge
	ok("POST", "/internal-accounts/"+p.account.ID+"/export", map[string]any{"clientPublicKey": mustKey(t).PublicKey().UncompressedHex()},
		nil, http.StatusAccepted).decode(t, &exportChallenge)
	if exportChallenge.ScaChallenge == nil {
		t.Fatal("the export was not held")
	}
	ok("GET", "/sca/challenges/"+exportChallenge.ScaChallenge.ID, nil, nil, http.StatusOK)
	ok("POST", "/sca/challenges/"+exportChallenge.ScaChallenge.ID+"/resend", nil, nil, http.StatusNoContent)
	ok("POST", "/sca/challenges/"+exportChallenge.ScaChallenge.ID+"/authorize", map[string]any{"code": "123456"}, nil, http.StatusOK)
	ok("PATCH", "/config", map[string]any{"stepUpPolicy": nil}, nil, http.StatusOK)

	// The session signs out, the recipient is removed.
	signedOK("DELETE", "/auth/sessions/"+fresh.ID, nil, next, http.StatusNoContent)
	ok("DELETE", "/customers/external-accounts/"+dest.ID, nil, nil, http.StatusNoContent)

	// The security log, and a security e-mail's link that signs every
	// session out (security_test.go).
	ok("GET", "/customers/security-events?customerId="+p.customer.ID+"&limit=5", nil, nil, http.StatusOK)
	ok("POST", "/auth/sign-out-everywhere", map[string]any{"token": e.signOutToken(p.email)}, device("203.0.113.9", "Every Op"), http.StatusOK)

	seen := e.h.(*docValidator).seenOperations()
	for key, op := range documentOperations(t) {
		if seen[op] == 0 {
			t.Errorf("%s (%s) was not driven through the validator", op, key)
		}
	}
}

// TestValidatorCatchesDrift: the validator refuses what the document does
// not allow, so a passing suite means something.
func TestValidatorCatchesDrift(t *testing.T) {
	router, err := testRouter()
	if err != nil {
		t.Fatal(err)
	}
	v := &docValidator{t: t, router: router, seen: map[string]int{}}
	const customer = `{"id":"Customer:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b","platformCustomerId":"p1","customerType":"INDIVIDUAL","umaAddress":"$p1@example.com","createdAt":"2026-11-22T12:00:00Z","updatedAt":"2026-11-22T12:00:00Z","isDeleted":false}`
	for _, tc := range []struct {
		name, method, path, reqBody string
		status                      int
		respBody                    string
		wantErr                     string // "" when the exchange is allowed
	}{
		{"a documented answer", "GET", "/customers/Customer:1", "", 200, customer, ""},
		{"a required field missing", "GET", "/customers/Customer:1", "", 200, `{"id":"Customer:1","customerType":"INDIVIDUAL"}`, "platformCustomerId"},
		{"an undocumented field", "GET", "/customers/Customer:1", "", 200, strings.Replace(customer, `"p1",`, `"p1","nickname":"x",`, 1), "nickname"},
		{"an error body without its requestId", "GET", "/customers/Customer:1", "", 404, `{"status":404,"code":"NOT_FOUND","message":"no"}`, "requestId"},
		{"an undocumented status", "GET", "/customers/Customer:1", "", 418, `{"status":418,"code":"TEAPOT","message":"no"}`, "status is not supported"},
		{"an error code of another status", "GET", "/customers/Customer:1", "", 404, `{"status":404,"code":"CONFLICT","message":"no"}`, "code"},
		{"an error body with another status", "GET", "/customers/Customer:1", "", 404, `{"status":400,"code":"NOT_FOUND","message":"no"}`, "status"},
		{"an accepted request the document refuses", "POST", "/customers", `{"platformCustomerId":"p1","customerType":"INDIVIDUAL","nickname":"x"}`, 201, customer, "request"},
		{"a refused request is not checked", "POST", "/customers", `{"customerType":"ALIEN"}`, 400, `{"status":400,"code":"INVALID_INPUT","message":"no","requestId":"req_x"}`, ""},
		{"a served path missing from the document", "GET", "/no-such-thing", "", 200, `{}`, "no operation"},
		{"an unknown path answered 404", "GET", "/no-such-thing", "", 404, `{"status":404,"code":"NOT_FOUND","message":"no","requestId":"req_x"}`, ""},
		{"a wrong method answered 405", "PUT", "/customers", "", 405, `{"status":405,"code":"METHOD_NOT_ALLOWED","message":"no","requestId":"req_x"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, wire.BasePath+tc.path, strings.NewReader(tc.reqBody))
			if tc.reqBody != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			rec := httptest.NewRecorder()
			rec.Header().Set("Content-Type", "application/json")
			rec.WriteHeader(tc.status)
			rec.WriteString(tc.respBody)
			err := v.check(req, []byte(tc.reqBody), rec)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatal("allowed")
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("error %q does not mention %q", err, tc.wantErr)
			}
		})
	}
}
