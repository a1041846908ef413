package service

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"paywallet/service/payments"
)

// TestRouteTable: the route table builds (routes() panics on a line it
// cannot serve, and the service would not start), and a line the
// transport cannot serve is refused when the table is built: a platform
// route without a permission, an operation whose arguments do not read
// the path's values, a key without idem or idem without a key, an agent's
// operation on a platform route, a body on a GET.
func TestRouteTable(t *testing.T) {
	e := newEnv(t)
	seen := map[string]bool{}
	for _, rt := range e.svc.routes() {
		key := rt.method + " " + rt.path
		if seen[key] {
			t.Errorf("%s is declared twice", key)
		}
		seen[key] = true
		if rt.h == nil && !rt.op.IsValid() {
			t.Errorf("%s runs nothing", key)
		}
	}
	o := e.svc.ops
	noop := func(context.Context, string) error { return nil }
	for _, tc := range []struct {
		name, want string
		line       func() route
	}{
		{"no permission", "has no permission", func() route { return get("/x", permission{}, o.GetQuote) }},
		{"a path value no argument reads", "path values", func() route { return get("/x/{a}/{b}", view, o.GetQuote) }},
		{"an argument that reads no path value", "path values", func() route { return get("/x", view, o.GetQuote) }},
		{"a key without idem", "idem", func() route { return post("/x", transact, o.CreateQuote) }},
		{"idem without a key", "idem", func() route { return post("/x", transact, o.CreateCustomer, idem("x")) }},
		{"an agent's operation on a platform route", "payments.AgentPrincipal", func() route { return get("/x", view, o.GetAgentMe) }},
		{"a platform operation on an agent route", "payments.AgentPrincipal", func() route { return agent("GET", "/x", o.GetConfig) }},
		{"a body on a GET", "no body", func() route { return get("/x", view, o.CreateCustomer) }},
		{"an error alone, not 204", "noContent", func() route { return del("/x/{id}", manage, noop) }},
		{"not an operation", "context.Context", func() route { return get("/x", view, func(string) error { return nil }) }},
		{"optionalBody without a body", "optionalBody", func() route { return post("/x/{id}", manage, o.GetQuote, optionalBody) }},
		{"sandboxOnly without the platform credential", "no permission", func() route { return public("POST", "/x", o.TestWebhook, sandboxOnly) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				p := recover()
				if msg, _ := p.(string); !strings.Contains(msg, tc.want) {
					t.Fatalf("panic %v, want one that says %q", p, tc.want)
				}
			}()
			tc.line()
		})
	}
}

// TestNeverStoredAreThe401s429sAnd5xx: the refusals the domain never
// stores under an Idempotency-Key (payments.NeverStored, by code) are
// exactly the ones this layer answers 401, 429 or 5xx.
func TestNeverStoredAreThe401s429sAnd5xx(t *testing.T) {
	for code, status := range statusOf {
		want := status == http.StatusUnauthorized || status == http.StatusTooManyRequests || status >= 500
		if got := payments.NeverStored(code); got != want {
			t.Errorf("%s (%d): never stored %v, want %v", code, status, got, want)
		}
	}
}
