package service

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"paywallet/internal/telemetry"
	"paywallet/service/payments"
	"paywallet/shared/wire"
)

// # The route line
//
// An operation is declared by one line of the route table, which carries
// everything the transport needs:
//
//	post("/quotes/{quoteId}/execute", transact, s.ops.ExecuteQuote, idem("quotes.execute"))
//
// The constructor names the method and the credential: get, post, patch
// and del take the platform's credential and the permission an API token
// needs (view, transact or manage; a platform route without one does not
// compile, and the zero permission makes routes() panic); agent takes an
// agent's bearer token; public takes none. The options say the rest: the
// success status when it is not 200 (created, accepted, noContent), the
// Idempotency-Key scope (idem), sandbox-only (sandboxOnly), and the few ways a
// body is read otherwise (optionalBody, ignoresBody, retryHeadersByOp).
//
// The operation is a method of the domain (payments.Service), taken as it
// is. Its Go signature says how the request is read, argument by argument
// after the context:
//
//   - string: a path wildcard, in the order of the path;
//   - a struct with query/path tags (a filter): bound from the query and
//     the path (bindURL);
//   - any other type: the JSON body, decoded strictly (jsonio.go); a
//     json.RawMessage is a body that must be a JSON object, passed as is;
//   - payments.SignedCall: the signed-retry headers, checked before the
//     body is decoded (signedretry.go);
//   - payments.Stamp: the Service-Wallet-Signature of an execute;
//   - payments.Once: the Idempotency-Key (with idem);
//   - payments.Principal: the platform credential's principal;
//   - payments.AgentPrincipal: the agent of the bearer token;
//   - payments.EndUser: the end user's IP address and device, from the
//     Service-End-User-Ip and Service-End-User-Device headers the BFF
//     sends (absent: unknown), for the security log only.
//
// and its results how it is answered: (T, error) writes T with the route's
// status, error alone answers 204, (payments.Signed[T], error) answers a
// first call's challenge 202, (payments.Answer, error) writes the
// Idempotency-Key answer the domain gives. A signature the route cannot
// serve (an argument it cannot read, a path wildcard no argument reads, a
// key without idem) makes routes() panic, so the service does not start;
// TestRouteTable builds the table.

// permission is what an API token needs for a platform route (the
// reference's Permission): view for every read; transact for what moves
// money or decides a payment; manage for what changes customers, their
// wallets' credentials and sessions, accounts, agents, the platform's
// configuration, webhooks and tokens.
type permission struct{ name string }

var (
	view     = permission{payments.PermissionView}
	transact = permission{payments.PermissionTransact}
	manage   = permission{payments.PermissionManage}
)

// handlerFunc is a handler that returns its refusal instead of writing it:
// the few routes that are no operation (the OpenAPI document, the webhook
// keys).
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// route is one line of the route table.
type route struct {
	method, path string
	auth         authKind
	need         permission // of a platform or sandbox route
	status       int        // of the operation's success
	scope        string     // Idempotency-Key scope; "" takes no key
	optionalBody bool       // an empty body decodes as {}
	ignoresBody  bool       // the body is not read
	byOp         bool       // the operation checks the retry headers' pairing itself, after the body
	wildcards    []string   // the path's wildcards, in order (bind)
	op           reflect.Value
	args         []arg
	h            handlerFunc // a route that is no operation
}

type authKind int

const (
	authPlatform authKind = iota // Basic platform credential
	authAgent                    // Bearer agent access token, never the platform credential
	authNone                     // the request itself is the proof (device-code redeem, public keys)
	authSandbox                  // the platform credential, and only in sandbox mode
)

// option is a route's option beyond its method, path, credential and
// operation.
type option func(*route)

var (
	created   option = func(rt *route) { rt.status = http.StatusCreated }
	noContent option = func(rt *route) { rt.status = http.StatusNoContent }
	// accepted: the work goes on after the answer (202).
	accepted option = func(rt *route) { rt.status = http.StatusAccepted }
	// sandboxOnly: the platform credential, and only in sandbox mode.
	sandboxOnly option = func(rt *route) { rt.auth = authSandbox }
	// optionalBody: no body (or an empty one) is the empty object.
	optionalBody option = func(rt *route) { rt.optionalBody = true }
	// ignoresBody: the body is not read at all.
	ignoresBody option = func(rt *route) { rt.ignoresBody = true }
	// retryHeadersByOp: the body is checked before the signed-retry
	// headers, whose pairing the operation checks itself (credential
	// verify: only its e-mail code leg is a signed retry).
	retryHeadersByOp option = func(rt *route) { rt.byOp = true }
)

// idem scopes the route's Idempotency-Key: the scope, then the agent's id
// (agent routes) and the path's values, so a key names one request to one
// target.
func idem(scope string) option { return func(rt *route) { rt.scope = scope } }

func get(path string, need permission, op any, opts ...option) route {
	return platformRoute("GET", path, need, op, opts)
}

func post(path string, need permission, op any, opts ...option) route {
	return platformRoute("POST", path, need, op, opts)
}

func patch(path string, need permission, op any, opts ...option) route {
	return platformRoute("PATCH", path, need, op, opts)
}

func del(path string, need permission, op any, opts ...option) route {
	return platformRoute("DELETE", path, need, op, opts)
}

// agent is a route of an agent's bearer token.
func agent(method, path string, op any, opts ...option) route {
	return newRoute(method, path, authAgent, permission{}, op, opts)
}

// public is a route without credential.
func public(method, path string, op any, opts ...option) route {
	return newRoute(method, path, authNone, permission{}, op, opts)
}

func platformRoute(method, path string, need permission, op any, opts []option) route {
	return newRoute(method, path, authPlatform, need, op, opts)
}

func newRoute(method, path string, auth authKind, need permission, op any, opts []option) route {
	rt := route{method: method, path: path, auth: auth, need: need, status: http.StatusOK}
	for _, o := range opts {
		o(&rt)
	}
	if platform := rt.auth == authPlatform || rt.auth == authSandbox; platform != (need != permission{}) {
		// A platform route without a permission, or sandboxOnly on a
		// route of another credential.
		panic("service: " + method + " " + path + " has no permission, or a permission without the platform credential")
	}
	if h, ok := op.(handlerFunc); ok {
		rt.h = h
		return rt
	}
	if err := rt.bind(reflect.ValueOf(op)); err != nil {
		panic("service: " + method + " " + path + ": " + err.Error())
	}
	return rt
}

// argKind is how an argument of an operation is read from the request.
type argKind int

const (
	argContext argKind = iota
	argPath
	argURL  // a struct bound from the query and the path
	argBody // the JSON body
	argRaw  // the JSON body, an object, as it is
	argSigned
	argStamp
	argOnce
	argPrincipal
	argAgent
	argEndUser
)

type arg struct {
	kind argKind
	t    reflect.Type
	name string // the path wildcard of an argPath
}

var (
	contextType = reflect.TypeFor[context.Context]()
	errorType   = reflect.TypeFor[error]()
	// argKinds are the arguments read by their type.
	argKinds = map[reflect.Type]argKind{
		reflect.TypeFor[payments.Once]():           argOnce,
		reflect.TypeFor[payments.SignedCall]():     argSigned,
		reflect.TypeFor[payments.Stamp]():          argStamp,
		reflect.TypeFor[payments.Principal]():      argPrincipal,
		reflect.TypeFor[payments.AgentPrincipal](): argAgent,
		reflect.TypeFor[json.RawMessage]():         argRaw,
		reflect.TypeFor[payments.EndUser]():        argEndUser,
	}
)

var wildcard = regexp.MustCompile(`\{([^}]+)\}`)

// bind reads the operation's signature into the route's arguments, and
// refuses one the route cannot serve.
func (rt *route) bind(op reflect.Value) error {
	t := op.Type()
	if t.Kind() != reflect.Func || t.NumIn() == 0 || t.In(0) != contextType {
		return fmt.Errorf("the operation %v must be a func(context.Context, …)", t)
	}
	if n := t.NumOut(); n == 0 || n > 2 || t.Out(n-1) != errorType {
		return fmt.Errorf("the operation %v must answer (T, error) or error", t)
	}
	if t.NumOut() == 1 && rt.status != http.StatusNoContent {
		return fmt.Errorf("an operation that answers only an error answers 204: add noContent")
	}
	var wildcards []string
	for _, m := range wildcard.FindAllStringSubmatch(rt.path, -1) {
		wildcards = append(wildcards, m[1])
	}
	rt.wildcards = wildcards
	var read []string // the wildcards the arguments read
	counts := map[argKind]int{}
	for i := range t.NumIn() {
		a := arg{t: t.In(i)}
		kind, typed := argKinds[a.t]
		switch {
		case i == 0:
			a.kind = argContext
		case typed:
			a.kind = kind
		case a.t.Kind() == reflect.String:
			a.kind = argPath
			if len(read) < len(wildcards) {
				a.name = wildcards[len(read)]
			}
			read = append(read, a.name)
		case urlBound(a.t):
			a.kind = argURL
			read = append(read, urlNames(a.t, "path")...)
		default:
			a.kind = argBody
		}
		counts[a.kind]++
		rt.args = append(rt.args, a)
	}
	body := counts[argBody] + counts[argRaw]
	switch {
	case !slices.Equal(read, wildcards):
		return fmt.Errorf("the arguments read the path values %q, the path has %q", read, wildcards)
	case body > 1 || counts[argURL] > 1 || counts[argSigned] > 1:
		return fmt.Errorf("%v reads more than one body, filter or signed call", t)
	case (counts[argOnce] == 1) != (rt.scope != ""):
		return fmt.Errorf("an operation takes a payments.Once exactly when its route has idem(scope)")
	case (counts[argAgent] == 1) != (rt.auth == authAgent):
		return fmt.Errorf("an operation takes the payments.AgentPrincipal exactly when its route is an agent's")
	case counts[argPrincipal] == 1 && rt.auth != authPlatform && rt.auth != authSandbox:
		return fmt.Errorf("only a platform route has a payments.Principal")
	case rt.optionalBody && body == 0:
		return fmt.Errorf("optionalBody, but the operation reads no body")
	case rt.ignoresBody && (body > 0 || counts[argSigned] > 0 || counts[argOnce] > 0):
		return fmt.Errorf("ignoresBody, but the operation reads the body")
	case rt.byOp && counts[argSigned] == 0:
		return fmt.Errorf("retryHeadersByOp, but the operation takes no payments.SignedCall")
	case body > 0 && !writes(rt.method):
		return fmt.Errorf("a %s has no body", rt.method)
	}
	rt.op = op
	return nil
}

// writes reports whether requests of the method may carry a body.
func writes(method string) bool { return method != "GET" && method != "HEAD" }

func (rt *route) has(k argKind) bool {
	return slices.ContainsFunc(rt.args, func(a arg) bool { return a.kind == k })
}

// principals are who a request was authenticated as (serve).
type principals struct {
	platform payments.Principal
	agent    payments.AgentPrincipal
}

// call serves one request of an operation: it reads the arguments in the
// order the interface checks them (the body read, then the signed-retry
// headers, then the body decoded), runs the operation and answers.
func (rt *route) call(w http.ResponseWriter, r *http.Request, who principals) error {
	var body []byte
	var err error
	reads := writes(rt.method) && !rt.ignoresBody
	if reads {
		if body, err = readBody(r); err != nil {
			return err
		}
	}
	hasBody := rt.has(argBody) || rt.has(argRaw)
	var call payments.SignedCall
	if rt.has(argSigned) && !rt.byOp {
		if !hasBody {
			// A signed operation without parameters: no body, or {}.
			if !emptyBody(body) {
				return errorf(http.StatusBadRequest, payments.CodeInvalidRequestFormat, "this request takes no body")
			}
			body = nil
		}
		if call, err = signedCall(r, body); err != nil {
			return err
		}
	}
	in := make([]reflect.Value, len(rt.args))
	for i, a := range rt.args {
		var v any
		switch a.kind {
		case argContext:
			v = r.Context()
		case argBody:
			p := reflect.New(a.t)
			if err := decodeJSON(r, body, p.Interface(), rt.optionalBody); err != nil {
				return err
			}
			in[i] = p.Elem()
			continue
		case argRaw:
			// Decoded to know it is one JSON object; the operation reads
			// its members itself (to tell null from absent).
			var members map[string]json.RawMessage
			if err := decodeJSON(r, body, &members, false); err != nil {
				return err
			}
			v = json.RawMessage(body)
		case argPath:
			v = r.PathValue(a.name)
		case argURL:
			p := reflect.New(a.t)
			bindURL(r, r.URL.Query(), p.Elem())
			in[i] = p.Elem()
			continue
		case argStamp:
			v = payments.Stamp(strings.TrimSpace(r.Header.Get(wire.HeaderWalletSignature)))
		case argPrincipal:
			v = who.platform
		case argAgent:
			v = who.agent
		case argSigned:
			v = call
		case argEndUser:
			v = payments.NewEndUser(r.Header.Get(wire.HeaderEndUserIP), r.Header.Get(wire.HeaderEndUserDevice))
		case argOnce:
			v = payments.Once{Scope: rt.keyScope(r, who), Key: r.Header.Get(wire.HeaderIdempotencyKey),
				RequestHash: payments.RequestHash(r.Method, r.URL.Path, body), Status: rt.status, Refusal: answerOf}
		}
		in[i] = reflect.ValueOf(v)
	}
	if !hasBody && reads && !rt.has(argSigned) {
		// No parameters: no body, or an empty JSON object; any member is
		// refused as unknown.
		var none struct{}
		if err := decodeJSON(r, body, &none, true); err != nil {
			return err
		}
	}
	if rt.byOp {
		in[slices.IndexFunc(rt.args, func(a arg) bool { return a.kind == argSigned })] = reflect.ValueOf(retryHeaders(r, body))
	}
	out := rt.op.Call(in)
	if err, _ := out[len(out)-1].Interface().(error); err != nil {
		return err
	}
	if len(out) == 1 {
		w.WriteHeader(rt.status)
		return nil
	}
	switch v := out[0].Interface().(type) {
	case payments.Answer:
		if v.Replayed {
			w.Header().Set("Idempotent-Replayed", "true")
		}
		body := v.Body
		if v.Status >= 400 {
			body = withRequestID(body, telemetry.RequestIDFrom(r.Context()))
		}
		writeRawJSON(w, v.Status, body)
	case interface {
		Parts() (*wire.SignedRequestChallenge, any)
	}:
		challenge, result := v.Parts()
		switch {
		case challenge != nil:
			writeJSON(w, http.StatusAccepted, challenge)
		case rt.status == http.StatusNoContent:
			w.WriteHeader(rt.status)
		default:
			writeJSON(w, rt.status, result)
		}
	default:
		writeJSON(w, rt.status, v)
	}
	return nil
}

// keyScope is the route's Idempotency-Key scope for this request: its
// idem scope, the agent's id on an agent route, and the path's values.
func (rt *route) keyScope(r *http.Request, who principals) string {
	parts := []string{rt.scope}
	if rt.auth == authAgent {
		parts = append(parts, who.agent.ID)
	}
	for _, name := range rt.wildcards {
		parts = append(parts, r.PathValue(name))
	}
	return strings.Join(parts, " ")
}

// answerOf is the status and encoded body the HTTP layer answers err with
// (payments.Once.Refusal); ok is false for an error it does not know
// (answered 500).
func answerOf(err error) (status int, body []byte, ok bool) {
	e, known := httpError(err)
	if !known {
		return 0, nil, false
	}
	body, mErr := json.Marshal(e.body())
	return e.Status, body, mErr == nil
}

// # Binding the path and the query

// urlBound reports whether t is a struct read from the URL: one with a
// query or path tag (in it or a struct field of it).
func urlBound(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && len(urlNames(t, "query"))+len(urlNames(t, "path")) > 0
}

// urlNames are the names of t's fields tagged kind ("query" or "path"),
// struct fields without tags included.
func urlNames(t reflect.Type, kind string) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		if name, ok := f.Tag.Lookup(kind); ok {
			names = append(names, name)
		} else if f.Type.Kind() == reflect.Struct && f.Tag.Get("query")+f.Tag.Get("path") == "" {
			names = append(names, urlNames(f.Type, kind)...)
		}
	}
	return names
}

// bindURL sets v's tagged fields: a query parameter's first value (a
// []string field: all of them) or a path value; untagged struct fields
// (a page) are bound the same way. Values are text: the operation checks
// them and names the bad ones.
func bindURL(r *http.Request, q url.Values, v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		switch name, query := f.Tag.Lookup("query"); {
		case query && f.Type.Kind() == reflect.Slice:
			fv.Set(reflect.ValueOf(q[name]))
		case query:
			fv.SetString(q.Get(name))
		case f.Tag.Get("path") != "":
			fv.SetString(r.PathValue(f.Tag.Get("path")))
		case f.Type.Kind() == reflect.Struct:
			bindURL(r, q, fv)
		}
	}
}
