package bff

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"paywallet/shared/wire"
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
	// vet, when set, checks the body about to be forwarded (after scope.set
	// rewrote it); an error is the answer and the service is never asked.
	vet func(body []byte) *Error
}

// routes is the table of mirrored service routes, one line each. The BFF's
// own handlers (server.go) are only those that do more than forward with a
// scope: config, the logins, me, logout, the event stream, and the three
// that change the cookie session itself (adding a credential consumes the
// registration challenge it keeps, refreshing the session follows the new
// one, revoking the cookie's own session signs the browser out).
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
	{method: "POST", path: "/quotes/:Quote/authorize", upstream: "/quotes/{Quote}/authorize", scope: scope{owner: boundTo("source.customerId", customer), check: "/quotes/{Quote}"}},
	{method: "POST", path: "/quotes/:Quote/authorize/resend", upstream: "/quotes/{Quote}/authorize/resend", scope: scope{owner: boundTo("source.customerId", customer), check: "/quotes/{Quote}"}},
	{method: "POST", path: "/sca/challenges/:ScaChallenge/authorize", upstream: "/sca/challenges/{ScaChallenge}/authorize", scope: scope{owner: boundTo("customerId", customer), check: "/sca/challenges/{ScaChallenge}"}},
	{method: "POST", path: "/sca/challenges/:ScaChallenge/resend", upstream: "/sca/challenges/{ScaChallenge}/resend", scope: scope{owner: boundTo("customerId", customer), check: "/sca/challenges/{ScaChallenge}"}},
	// The wallet's statement (the books' entries on its two sides): the
	// path names the account, and it must be the cookie's own.
	{method: "GET", path: "/internal-accounts/:InternalAccount/entries", upstream: "/internal-accounts/{InternalAccount}/entries", query: []string{"limit", "cursor", "createdAfter", "createdBefore", "sortOrder"}, scope: scope{param: boundTo("InternalAccount", account)}},
	{method: "GET", path: "/transactions", upstream: "/transactions", query: []string{"limit", "cursor", "status", "type", "startDate", "endDate", "sortOrder"}, scope: scope{bind: boundTo("customerId", customer)}},
	{method: "GET", path: "/transactions/:Transaction", upstream: "/transactions/{Transaction}", scope: scope{owner: boundTo("customerId", customer)}},
	{method: "POST", path: "/transactions/:Transaction/confirm", upstream: "/transactions/{Transaction}/confirm", scope: scope{owner: boundTo("customerId", customer), check: "/transactions/{Transaction}"}},
	// A create has no resource to own yet: the body is bound instead. The
	// recipient is checked with the rules the service and the wasm module
	// run (shared/accountrules), so a body the service would refuse is
	// answered here with the same 400 and never reaches it.
	{method: "POST", path: "/customers/external-accounts", upstream: "/customers/external-accounts", scope: scope{set: []bodyField{field("customerId", customer)}}, vet: checkAccount},
	// A quote pays from the cookie's wallet whatever source the browser
	// sent; the service refuses a destination of another customer.
	{method: "POST", path: "/quotes", upstream: "/quotes", scope: scope{set: []bodyField{walletSource}}},
	// Sandbox money for the cookie's wallet (403 unless the service runs in
	// sandbox mode).
	{method: "POST", path: "/sandbox/fund", upstream: "/sandbox/internal-accounts/{InternalAccount}/fund", scope: scope{fill: boundTo("InternalAccount", account)}},
	// The signed retries on the wallet account itself.
	{method: "POST", path: "/internal-accounts/:InternalAccount/export", upstream: "/internal-accounts/{InternalAccount}/export", scope: scope{param: boundTo("InternalAccount", account), signed: true}},
	{method: "PATCH", path: "/internal-accounts/:InternalAccount", upstream: "/internal-accounts/{InternalAccount}", scope: scope{param: boundTo("InternalAccount", account), signed: true}},
	// A credential of the cookie's wallet: listed among the account's own
	// before the delete is sent.
	{method: "GET", path: "/security-events", upstream: "/customers/security-events", query: []string{"limit", "cursor"}, scope: scope{bind: boundTo("customerId", customer)}},
	{method: "GET", path: "/internal-accounts/:InternalAccount/limits", upstream: "/internal-accounts/{InternalAccount}/limits", scope: scope{param: boundTo("InternalAccount", account)}},
	{method: "PATCH", path: "/internal-accounts/:InternalAccount/limits", upstream: "/internal-accounts/{InternalAccount}/limits", scope: scope{param: boundTo("InternalAccount", account), signed: true}},
	{method: "DELETE", path: "/auth/credentials/:AuthMethod", upstream: "/auth/credentials/{AuthMethod}", scope: scope{listed: &listing{path: "/auth/credentials", by: boundTo("accountId", account)}}},
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
//   - A create (set) names no resource; fill, signed with param, and listed
//     each confine a write to the cookie's own resource before it is sent.
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
	// set binds a create's body: the browser's JSON object with these
	// fields replaced by the cookie session's values, whatever it sent. A
	// create has no resource to own yet; set is what confines it.
	set []bodyField
	// fill takes upstream path ids, by id type, from the cookie session: the
	// path does not name the resource, the cookie does (POST /sandbox/fund
	// funds the cookie's own wallet).
	fill []binding
	// signed marks a signed retry on the resource param binds: the service
	// acts only on a retry stamped by a session key of that very account,
	// so param (the cookie's own account) confines the write with no check.
	signed bool
	// listed, for a route naming one resource that has no GET of its own,
	// requires the id to be among those the listing answers for the cookie
	// session, before anything is sent (a credential of the cookie's
	// wallet).
	listed *listing
}

// bodyField is one field scope.set writes into a create's body: value
// returns it from the cookie session, or false when the session lacks it
// (the browser is then treated as signed out).
type bodyField struct {
	name  string
	value func(Session) (any, bool)
}

// field sets name to the session's subject.
func field(name string, to subject) bodyField {
	return bodyField{name, func(d Session) (any, bool) { v := to.of(d); return v, v != "" }}
}

// walletSource makes a quote's source the cookie's wallet account.
var walletSource = bodyField{"source", func(d Session) (any, bool) {
	return map[string]any{"sourceType": "ACCOUNT", "accountId": d.InternalAccountID, "customerId": d.CustomerID},
		d.InternalAccountID != "" && d.CustomerID != ""
}}

// listing is a list operation of the service whose items are the cookie
// session's own: path with the by bindings as query parameters; an item
// counts only when its by fields equal the session's too.
type listing struct {
	path string
	by   []binding
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
	sc := rt.scope
	filled := map[string]bool{}
	for _, b := range sc.fill {
		filled[b.name] = true
		if strings.Contains(rt.path+"/", "/:"+b.name+"/") {
			return fmt.Errorf("fill takes {%s} from the cookie, but the path names it too", b.name)
		}
	}
	// named lists the ids the browser's path names (not those fill takes
	// from the cookie).
	var named []string
	for i, tmpl := range []string{rt.upstream, sc.check} {
		types, err := placeholders(tmpl)
		if err != nil {
			return err
		}
		for _, typ := range types {
			if i == 0 && filled[typ] {
				continue
			}
			if !strings.Contains(rt.path+"/", "/:"+typ+"/") {
				return fmt.Errorf("template names {%s} but the path has no :%s", typ, typ)
			}
			if i == 0 {
				named = append(named, typ)
			}
		}
	}
	for b := range filled {
		if !strings.Contains(rt.upstream, "{"+b+"}") {
			return fmt.Errorf("fill takes {%s} but the upstream template has none", b)
		}
	}
	byID := len(named) > 0
	if sc.check != "" {
		checked, _ := placeholders(sc.check)
		for _, typ := range named {
			if !slices.Contains(checked, typ) {
				return fmt.Errorf("the check does not look at {%s}, which the request acts on", typ)
			}
		}
	}
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
		case len(sc.bind) > 0 || len(sc.owner) > 0 || len(sc.param) > 0 || sc.check != "" ||
			len(sc.set) > 0 || len(sc.fill) > 0 || sc.signed || sc.listed != nil:
			return fmt.Errorf("shared excludes every other scope: a route either holds a customer's data or none")
		}
		return nil
	}
	write := rt.method != http.MethodGet
	// confined: the write acts only on the cookie's own resource, known
	// before anything is sent.
	var confined bool
	switch {
	case len(sc.set) > 0:
		if rt.method != http.MethodPost || byID {
			return fmt.Errorf("set binds the body of a create: a POST that names no resource")
		}
		confined = true
	case len(sc.fill) > 0:
		confined = !byID
	case sc.signed:
		if !write || !byID || !paramsBound(rt.upstream, sc.param) {
			return fmt.Errorf("signed confines a write only with a param for every id the path names")
		}
		confined = true
	case sc.listed != nil:
		if len(named) != 1 || len(sc.listed.by) == 0 || !strings.HasPrefix(sc.listed.path, "/") {
			return fmt.Errorf("listed needs exactly one id in the path and a listing bound to the cookie")
		}
		confined = true
	}
	switch {
	case sc.check != "" && len(sc.owner) == 0:
		return fmt.Errorf("a check without owner fields checks nothing")
	case len(sc.bind) == 0 && len(sc.owner) == 0 && len(sc.param) == 0 && !confined:
		return fmt.Errorf("a route must be scoped to the cookie's customer or account")
	case confined:
		return nil
	case byID && len(sc.owner) == 0 && !paramsBound(rt.upstream, sc.param):
		return fmt.Errorf("a route naming a resource by id needs owner fields or a param for each id; bind does not confine it")
	case write && len(sc.owner) == 0:
		return fmt.Errorf("a %s scoped by bind alone forwards its body unbound; it needs a resource with owner fields and a check", rt.method)
	case write && sc.check == "":
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
	named := false // the browser's path names a resource
	types, _ := placeholders(rt.upstream)
	for _, typ := range types {
		named = named || !slices.ContainsFunc(rt.scope.fill, func(b binding) bool { return b.name == typ })
	}
	return func(c *fiber.Ctx) error {
		cs, err := s.signedIn(c)
		if err != nil {
			return err
		}
		param := func(typ string) string {
			for _, b := range rt.scope.fill {
				if b.name == typ {
					return b.to.of(cs.data)
				}
			}
			return c.Params(typ)
		}
		p, ok := expand(rt.upstream, param)
		if !ok {
			if len(rt.scope.fill) > 0 {
				return errSignedOut // the cookie session lacks what fill needs
			}
			return notFound()
		}
		for _, b := range rt.scope.param {
			if want := b.to.of(cs.data); want == "" || param(b.name) != want {
				return notFound() // another's, as if missing, without asking
			}
		}
		var body []byte
		if rt.method != http.MethodGet {
			if body, err = rt.scope.bindBody(c.Body(), cs.data); err != nil {
				return err
			}
			if rt.vet != nil {
				if e := rt.vet(body); e != nil {
					return e
				}
			}
		}
		ctx := c.UserContext()
		if l := rt.scope.listed; l != nil {
			// validate: a listed route names exactly one id.
			if ok, err := s.isListed(ctx, l, cs.data, param(types[0])); err != nil || !ok {
				return cmp.Or(err, error(notFound()))
			}
		}
		header, err := forwardable(c)
		if err != nil {
			return err
		}
		if len(rt.scope.set) > 0 || len(rt.scope.fill) > 0 || rt.scope.signed {
			// Bodies the BFF builds or binds itself are JSON, whatever the
			// browser said.
			header.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
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

		if rt.scope.check != "" {
			cp, ok := expand(rt.scope.check, param)
			if !ok {
				return notFound()
			}
			r, err := s.up.do(ctx, call{method: http.MethodGet, path: cp})
			if err != nil {
				return s.unreachable(ctx, err)
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

		r, err := s.up.do(ctx, call{method: rt.method, path: p, query: q, header: header, body: body})
		if err != nil {
			return s.unreachable(ctx, err)
		}
		if named && r.status == http.StatusNotFound {
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

// bindBody is the body forwarded for a write: the browser's bytes as they
// are, or, for a create (set), its JSON object with the set fields written
// from the cookie session and encoded again, so the service sees exactly
// the object built here whatever duplicate keys the browser sent.
func (sc scope) bindBody(in []byte, d Session) ([]byte, error) {
	if len(sc.set) == 0 {
		return in, nil
	}
	obj, err := decodeObject(in)
	if err != nil {
		return nil, &Error{Status: http.StatusBadRequest, Code: codeInvalidRequestFormat, Message: "the body must be one JSON object"}
	}
	for _, f := range sc.set {
		v, ok := f.value(d)
		if !ok {
			return nil, errSignedOut
		}
		// The service decodes into structs, and encoding/json takes a key
		// that equals a field's name but for case (Unicode folding: "ſource"
		// is "source") as that field, the last one read winning. A key the
		// browser spelled so would outvote the cookie's value: every
		// spelling of the name goes before the cookie's is written.
		for k := range obj {
			if strings.EqualFold(k, f.name) {
				delete(obj, k)
			}
		}
		obj[f.name] = v
	}
	return json.Marshal(obj)
}

// isListed reports whether id is among the items the listing answers for
// the cookie session (each item's by fields equal to the session's too).
func (s *Server) isListed(ctx context.Context, l *listing, d Session, id string) (bool, error) {
	q := url.Values{}
	for _, b := range l.by {
		q.Set(b.name, b.to.of(d))
	}
	list, err := platformList[map[string]any](ctx, s, l.path, q)
	if err != nil {
		return false, err
	}
	for _, item := range list {
		if got, _ := item["id"].(string); got == id && ownsObject(item, l.by, d) {
			return true, nil
		}
	}
	return false, nil
}

// owns reports whether every owner field of the JSON object body equals the
// session's value. A missing field or an empty session value is not a match.
func owns(body []byte, owner []binding, d Session) bool {
	var obj map[string]any
	if json.Unmarshal(body, &obj) != nil {
		return false
	}
	return ownsObject(obj, owner, d)
}

// platformList reads one page of a list operation with the platform
// credential, for a check the BFF makes on its own account: a refusal is
// relayed as relayInternal says, an answer it cannot read is a 502.
func platformList[T any](ctx context.Context, s *Server, path string, q url.Values) ([]T, error) {
	r, err := s.up.do(ctx, call{method: http.MethodGet, path: path, query: q})
	if err != nil {
		return nil, s.unreachable(ctx, err)
	}
	if r.status != http.StatusOK {
		return nil, s.relayInternal(ctx, r)
	}
	var list wire.Data[T]
	if err := json.Unmarshal(r.body, &list); err != nil {
		return nil, s.malformed(ctx, path, r, err)
	}
	return list.Data, nil
}

// ownsObject is owns for a decoded object.
func ownsObject(obj map[string]any, owner []binding, d Session) bool {
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
