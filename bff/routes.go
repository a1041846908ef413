package bff

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// route mirrors one service operation under /api. It is the whole allowlist
// of what the browser can make the BFF send with the platform credential:
// one method, one path template, the query parameters named here, and a
// scope that binds the request to the cookie's customer or account.
type route struct {
	method string
	// path is the BFF path below /api in Fiber syntax; a parameter is named
	// by the id type it must hold, e.g. "/quotes/:Quote".
	path string
	// upstream is the service path template; "{Quote}" takes the parameter
	// ":Quote" after it has been validated as a Quote id.
	upstream string
	// query lists the browser query parameters passed on unchanged (for
	// example "limit", "cursor"); every other one is dropped.
	query []string
	scope scope
	// annotate, when set, rewrites the body of the service's 200 answer
	// before it is relayed (for example, GET /auth/sessions adds the
	// device each session was signed in from: signin.go).
	annotate func(s *Server, ctx context.Context, body []byte) []byte
}

// routes is the table of mirrored service routes. Later routes are one line
// each, for example:
//
//	{method: "GET", path: "/customers/external-accounts", upstream: "/customers/external-accounts", query: []string{"limit", "cursor"}, scope: scope{bind: boundTo("customerId", customer)}},
//	{method: "GET", path: "/customers/external-accounts/:ExternalAccount", upstream: "/customers/external-accounts/{ExternalAccount}", scope: scope{owner: boundTo("customerId", customer)}},
//	{method: "POST", path: "/quotes/:Quote/execute", upstream: "/quotes/{Quote}/execute", scope: scope{owner: boundTo("source.customerId", customer), check: "/quotes/{Quote}"}},
//
// POST /api/customers/external-accounts is not here: a create has no resource
// to own yet, so it is the BFF's own handler (externalaccounts.go), which
// sets the body's customerId itself.
var routes = []route{
	{method: "GET", path: "/auth/sessions", upstream: "/auth/sessions", scope: scope{bind: boundTo("accountId", account)}, annotate: (*Server).withDevices},
	{method: "GET", path: "/auth/credentials", upstream: "/auth/credentials", scope: scope{bind: boundTo("accountId", account)}},
	{method: "GET", path: "/customers/external-accounts", upstream: "/customers/external-accounts", query: []string{"limit", "cursor", "currency"}, scope: scope{bind: boundTo("customerId", customer)}},
	{method: "GET", path: "/customers/external-accounts/:ExternalAccount", upstream: "/customers/external-accounts/{ExternalAccount}", scope: scope{owner: boundTo("customerId", customer)}},
	// Removing a recipient is the service's deactivation (status INACTIVE):
	// the account stays readable, so payments that name it keep their label.
	{method: "DELETE", path: "/customers/external-accounts/:ExternalAccount", upstream: "/customers/external-accounts/{ExternalAccount}", scope: scope{owner: boundTo("customerId", customer), check: "/customers/external-accounts/{ExternalAccount}"}},
	{method: "GET", path: "/discoveries", upstream: "/discoveries", query: []string{"country", "currency"}, scope: scope{shared: true}},
	{method: "GET", path: "/exchange-rates", upstream: "/exchange-rates", query: []string{"sourceCurrency", "destinationCurrency", "sendingAmount"}, scope: scope{shared: true}},
	{method: "GET", path: "/quotes/:Quote", upstream: "/quotes/{Quote}", scope: scope{owner: boundTo("source.customerId", customer)}},
	{method: "POST", path: "/quotes/:Quote/execute", upstream: "/quotes/{Quote}/execute", scope: scope{owner: boundTo("source.customerId", customer), check: "/quotes/{Quote}"}},
	// The wallet's statement (the books' entries on its two sides): the
	// path names the account, and it must be the cookie's own.
	{method: "GET", path: "/internal-accounts/:InternalAccount/entries", upstream: "/internal-accounts/{InternalAccount}/entries", query: []string{"limit", "cursor", "createdAfter", "createdBefore", "sortOrder"}, scope: scope{param: boundTo("InternalAccount", account)}},
	{method: "GET", path: "/transactions", upstream: "/transactions", query: []string{"limit", "cursor", "status", "type", "startDate", "endDate", "sortOrder"}, scope: scope{bind: boundTo("customerId", customer)}},
	{method: "GET", path: "/transactions/:Transaction", upstream: "/transactions/{Transaction}", scope: scope{owner: boundTo("customerId", customer)}},
	{method: "POST", path: "/transactions/:Transaction/confirm", upstream: "/transactions/{Transaction}/confirm", scope: scope{owner: boundTo("customerId", customer), check: "/transactions/{Transaction}"}},
}

// subject names a value of the cookie session a request is bound to.
type subject int

const (
	customer subject = iota + 1 // the signed-in customer's id
	account                     // the signed-in customer's embedded wallet account id
)

func (s subject) of(d Session) string {
	switch s {
	case customer:
		return d.CustomerID
	case account:
		return d.InternalAccountID
	}
	return ""
}

// binding ties a name to a subject. In scope.bind the name is an upstream
// query parameter; in scope.owner it is a field (dot path) of the
// resource's JSON; in scope.param it is the id type of a path parameter.
type binding struct {
	name string
	to   subject
}

func boundTo(name string, to subject) []binding { return []binding{{name, to}} }

// scope is how a route is confined to the browser's own resources. The
// rules validate enforces:
//
//   - A route that names a resource by id in its path needs owner, or param
//     for every id it names: a query parameter cannot confine a resource the
//     path already names.
//   - A route with effects (any method but GET) that names a resource needs
//     check as well, so that ownership is known before the effect happens.
//   - A route with effects needs a resource to own: bind alone only sets
//     query parameters, while the body (and, say, a customerId in it) goes
//     to the service unchanged, so a create scoped by bind would act on
//     whatever customer the body names.
//   - shared (reference data that belongs to no customer, such as bank
//     names) stands alone: only for a GET that names no resource, and never
//     with bind, owner, param or check. It still requires a signed-in
//     cookie.
type scope struct {
	// bind sets these upstream query parameters from the cookie session,
	// replacing whatever the browser sent. It never touches the body.
	bind []binding
	// owner fields of the resource must equal the cookie session's values,
	// otherwise the answer is the same 404 as for a missing resource. For a
	// read, the fields are checked in the service's 2xx answer itself.
	owner []binding
	// param binds path parameters, by id type, to the cookie session:
	// the id must be the session's own (its wallet account), otherwise the
	// answer is the same 404 as for a missing resource and the service is
	// never asked. It confines a resource the path names whose answer has
	// no owner field to check, such as a list below it (an account's
	// statement). It does not bind the body, so a route with effects still
	// needs owner and check.
	param []binding
	// check, when set, is a GET template fetched (and owner-checked) before
	// the route's own request is sent, for operations that have effects.
	check string
	// shared marks a read of reference data that holds no customer's data
	// (for example GET /discoveries): nothing to bind or own, but the route
	// still answers only a signed-in cookie.
	shared bool
}

// mount registers the routes on the /api group after checking that every
// template names known id types that the path provides.
func (s *Server) mount(api fiber.Router, table []route) error {
	for _, rt := range table {
		if err := rt.validate(); err != nil {
			return fmt.Errorf("route %s %s: %w", rt.method, rt.path, err)
		}
		api.Add(rt.method, rt.path, s.mirror(rt))
	}
	return nil
}

func (rt route) validate() error {
	switch rt.method {
	case http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete:
	default:
		return fmt.Errorf("method %q not allowed", rt.method)
	}
	if !strings.HasPrefix(rt.path, "/") || !strings.HasPrefix(rt.upstream, "/") {
		return fmt.Errorf("paths must start with /")
	}
	for _, tmpl := range []string{rt.upstream, rt.scope.check} {
		types, err := placeholders(tmpl)
		if err != nil {
			return err
		}
		for _, typ := range types {
			if !strings.Contains(rt.path+"/", "/:"+typ+"/") {
				return fmt.Errorf("template names {%s} but the path has no :%s", typ, typ)
			}
		}
	}
	sc := rt.scope
	byID := strings.Contains(rt.upstream, "{")
	for _, b := range sc.param {
		if !strings.Contains(rt.path+"/", "/:"+b.name+"/") {
			return fmt.Errorf("param binds :%s but the path has none", b.name)
		}
	}
	if sc.shared {
		switch {
		case rt.method != http.MethodGet:
			return fmt.Errorf("shared reference data is read-only; a %s must be scoped to the cookie's customer", rt.method)
		case byID:
			return fmt.Errorf("a route naming a resource by id needs owner fields, not shared")
		case len(sc.bind) > 0 || len(sc.owner) > 0 || len(sc.param) > 0 || sc.check != "":
			return fmt.Errorf("shared excludes bind, owner, param and check: a route either holds a customer's data or none")
		}
		return nil
	}
	switch {
	case sc.check != "" && len(sc.owner) == 0:
		return fmt.Errorf("a check without owner fields checks nothing")
	case len(sc.bind) == 0 && len(sc.owner) == 0 && len(sc.param) == 0:
		return fmt.Errorf("a route must be scoped to the cookie's customer or account")
	case byID && len(sc.owner) == 0 && !paramsBound(rt.upstream, sc.param):
		return fmt.Errorf("a route naming a resource by id needs owner fields or a param for each id; bind does not confine it")
	case rt.method != http.MethodGet && len(sc.owner) == 0:
		return fmt.Errorf("a %s scoped by bind alone forwards its body unbound; it needs a resource with owner fields and a check", rt.method)
	case rt.method != http.MethodGet && sc.check == "":
		return fmt.Errorf("a %s would act before its owner is known; it needs a check", rt.method)
	}
	return nil
}

// paramsBound reports whether every id the template names is bound by
// param.
func paramsBound(template string, param []binding) bool {
	types, err := placeholders(template)
	if err != nil || len(types) == 0 {
		return false
	}
	for _, typ := range types {
		bound := false
		for _, b := range param {
			bound = bound || b.name == typ
		}
		if !bound {
			return false
		}
	}
	return true
}

// mirror is the handler of one route.
func (s *Server) mirror(rt route) fiber.Handler {
	hasID := strings.Contains(rt.upstream, "{")
	return func(c *fiber.Ctx) error {
		cs, err := s.signedIn(c)
		if err != nil {
			return err
		}
		param := func(typ string) string { return c.Params(typ) }
		p, ok := expand(rt.upstream, param)
		if !ok {
			return notFound()
		}
		for _, b := range rt.scope.param {
			if want := b.to.of(cs.data); want == "" || param(b.name) != want {
				return notFound() // another's, as if missing, without asking
			}
		}
		header, err := forwardable(c)
		if err != nil {
			return err
		}
		q := url.Values{}
		for _, name := range rt.query {
			if v := c.Query(name); v != "" {
				q.Set(name, v)
			}
		}
		for _, b := range rt.scope.bind {
			q.Set(b.name, b.to.of(cs.data))
		}
		ctx := c.UserContext()

		if rt.scope.check != "" {
			cp, ok := expand(rt.scope.check, param)
			if !ok {
				return notFound()
			}
			r, err := s.up.do(ctx, call{method: http.MethodGet, path: cp})
			if err != nil {
				return s.unreachable(err)
			}
			if r.status == http.StatusNotFound {
				return notFound()
			}
			if r.status != http.StatusOK {
				return writeReply(c, r)
			}
			if !owns(r.body, rt.scope.owner, cs.data) {
				return notFound()
			}
		}

		in := call{method: rt.method, path: p, query: q, header: header}
		if rt.method != http.MethodGet {
			in.body = c.Body()
		}
		r, err := s.up.do(ctx, in)
		if err != nil {
			return s.unreachable(err)
		}
		if hasID && r.status == http.StatusNotFound {
			return notFound() // one body for "missing" and "not yours"
		}
		if rt.scope.check == "" && len(rt.scope.owner) > 0 && r.status >= 200 && r.status < 300 && !owns(r.body, rt.scope.owner, cs.data) {
			return notFound()
		}
		if rt.annotate != nil && r.status == http.StatusOK {
			r.body = rt.annotate(s, ctx, r.body)
		}
		return writeReply(c, r)
	}
}

// owns reports whether every owner field of the JSON object body equals the
// session's value. A missing field or an empty session value is not a match.
func owns(body []byte, owner []binding, d Session) bool {
	var obj map[string]any
	if json.Unmarshal(body, &obj) != nil {
		return false
	}
	for _, b := range owner {
		want := b.to.of(d)
		got, ok := lookup(obj, b.name)
		if !ok || want == "" || got != want {
			return false
		}
	}
	return true
}

// lookup follows a dot path such as "source.accountId" to a string value.
func lookup(obj map[string]any, dotPath string) (string, bool) {
	var cur any = obj
	for _, key := range strings.Split(dotPath, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false
		}
		cur = m[key]
	}
	s, ok := cur.(string)
	return s, ok
}
