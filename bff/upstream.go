package bff

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"paywallet/shared/wire"
)

// upstream is the BFF's only way to the service. Every request is built
// from scratch: a fixed method, a path expanded from a template whose ids
// have been validated, query parameters chosen by the caller, the body, the
// few browser headers in forwardHeaders, and the platform Basic credential.
// Nothing else of the browser's request (cookies, Authorization, hop-by-hop
// or X-Forwarded-* headers, other query parameters) can reach the service.
type upstream struct {
	base   url.URL // scheme, host and the version path, e.g. /2025-10-13
	client *http.Client
	auth   string // "Basic …"; never logged, never sent to the browser
}

const (
	upstreamTimeout = 15 * time.Second
	maxUpstreamBody = 1 << 20
)

// forwardHeaders are the only request headers copied from the browser.
var forwardHeaders = []string{
	fiber.HeaderContentType,
	wire.HeaderWalletSignature,
	wire.HeaderRequestID,
	wire.HeaderIdempotencyKey,
}

// relayHeaders are the only response headers copied from the service.
var relayHeaders = []string{fiber.HeaderContentType, fiber.HeaderRetryAfter, "Idempotent-Replayed"}

// call is one request to the service.
type call struct {
	method string
	path   string // below the base path; built by expand or from constants
	query  url.Values
	body   []byte
	header http.Header // forwardable headers only
}

// reply is the service's answer, read whole.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func newUpstream(serviceURL, credential string, rt http.RoundTripper) (*upstream, error) {
	u, err := url.Parse(serviceURL)
	if err != nil {
		return nil, fmt.Errorf("ServiceURL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("ServiceURL %q: want an absolute http or https URL", serviceURL)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, fmt.Errorf("ServiceURL %q: must not carry user info, a query or a fragment", serviceURL)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	if rt == nil {
		rt = serviceTransport()
	}
	return &upstream{
		base: *u,
		client: &http.Client{
			Transport: rt,
			Timeout:   upstreamTimeout,
			// A redirect would be a misconfiguration; never follow one with
			// the platform credential.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		auth: "Basic " + base64.StdEncoding.EncodeToString([]byte(credential)),
	}, nil
}

// serviceTransport is the default way to the service: the standard
// transport's dialer, TLS and timeouts, but keeping as many idle
// connections to the one service host as a busy BFF has requests in
// flight. http.DefaultTransport keeps two per host, so under concurrency
// most forwarded requests would open (and leave in TIME_WAIT) a new
// connection; the bench measured that halving forwarded reads at 16
// clients.
func serviceTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 256
	return t
}

// do sends one request. An error means the service could not be reached or
// answered something that is not an HTTP answer we relay (a redirect, an
// oversized body); callers answer 502 SERVICE_UNAVAILABLE for it.
func (u *upstream) do(ctx context.Context, in call) (*reply, error) {
	target := u.base
	target.Path = u.base.Path + in.path
	target.RawQuery = in.query.Encode()

	var body io.Reader = http.NoBody
	if len(in.body) > 0 {
		body = bytes.NewReader(in.body)
	}
	req, err := http.NewRequestWithContext(ctx, in.method, target.String(), body)
	if err != nil {
		return nil, fmt.Errorf("upstream %s %s: %w", in.method, in.path, err)
	}
	for _, name := range forwardHeaders {
		if v := in.header.Get(name); v != "" {
			req.Header.Set(name, v)
		}
	}
	req.Header.Set("Authorization", u.auth)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "paywallet-bff")
	if eu, ok := ctx.Value(endUserKey{}).(endUser); ok {
		req.Header.Set(wire.HeaderEndUserIP, eu.ip)
		if eu.device != "" {
			req.Header.Set(wire.HeaderEndUserDevice, eu.device)
		}
	}

	resp, err := u.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("upstream %s %s: %w", in.method, in.path, err)
	}
	defer resp.Body.Close()
	// The service's id of its answer goes with every failure reported
	// from here on (upstream_request_id in the log line).
	fail := func(err error) error {
		return &upstreamError{err: err, requestID: resp.Header.Get(wire.HeaderRequestID)}
	}
	if resp.StatusCode < 200 || (resp.StatusCode >= 300 && resp.StatusCode < 400) || resp.StatusCode > 599 {
		return nil, fail(fmt.Errorf("upstream %s %s: unexpected status %d", in.method, in.path, resp.StatusCode))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxUpstreamBody+1))
	if err != nil {
		return nil, fail(fmt.Errorf("upstream %s %s: reading body: %w", in.method, in.path, err))
	}
	if len(b) > maxUpstreamBody {
		return nil, fail(fmt.Errorf("upstream %s %s: body larger than %d bytes", in.method, in.path, maxUpstreamBody))
	}
	if len(b) > 0 && !isJSON(resp.Header.Get("Content-Type")) {
		return nil, fail(fmt.Errorf("upstream %s %s: status %d with content type %q", in.method, in.path, resp.StatusCode, resp.Header.Get("Content-Type")))
	}
	return &reply{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// requestID is the service's Request-Id of this answer.
func (r *reply) requestID() string { return r.header.Get(wire.HeaderRequestID) }

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// errorCode returns the code of a flat error body, or "".
func (r *reply) errorCode() string {
	var e wire.Error
	if json.Unmarshal(r.body, &e) != nil {
		return ""
	}
	return e.Code
}

// relayed is returned by handlers to pass a service answer to the browser
// unchanged: status, body bytes, Content-Type and Retry-After.
type relayed struct{ r *reply }

func (e relayed) Error() string { return fmt.Sprintf("relayed service answer %d", e.r.status) }

func relay(r *reply) error { return relayed{r} }

func writeReply(c *fiber.Ctx, r *reply) error {
	for _, name := range relayHeaders {
		if v := r.header.Get(name); v != "" {
			c.Set(name, v)
		}
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(r.status).Send(r.body)
}

// forwardable copies the allowlisted headers of the browser's request. A
// value with a control character is refused instead of being passed on.
func forwardable(c *fiber.Ctx) (http.Header, error) {
	h := http.Header{}
	for _, name := range forwardHeaders {
		v := c.Get(name)
		if v == "" {
			continue
		}
		if len(v) > 8192 || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return nil, invalidField(name, "", "header value is malformed")
		}
		h.Set(name, v)
	}
	return h, nil
}

// Id types the BFF accepts in paths. An id is "<Type>:<uuid>" with the uuid
// in lower-case hex in the 8-4-4-4-12 form; nothing else is ever put into
// an upstream path.
var idTypes = map[string]bool{
	"Customer":        true,
	"InternalAccount": true,
	"AuthMethod":      true,
	"Session":         true,
	"Request":         true,
	"ExternalAccount": true,
	"Quote":           true,
	"Transaction":     true,
	"ScaChallenge":    true,
}

// validID reports whether s is an id of type typ.
func validID(typ, s string) bool {
	rest, ok := strings.CutPrefix(s, typ+":")
	return ok && idTypes[typ] && isUUID(rest)
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// splitTemplate cuts a path template such as
// "/auth/credentials/{AuthMethod}/verify" into its literal parts and the id
// types named between them: len(lits) == len(types)+1. Every type must be
// one of idTypes.
func splitTemplate(template string) (lits, types []string, err error) {
	rest := template
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			return append(lits, rest), types, nil
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, nil, errors.New("unclosed {")
		}
		typ := rest[open+1 : open+end]
		if !idTypes[typ] {
			return nil, nil, fmt.Errorf("unknown id type %q", typ)
		}
		lits, types = append(lits, rest[:open]), append(types, typ)
		rest = rest[open+end+1:]
	}
}

// expand fills a path template. Each placeholder names an id type; param
// returns the candidate value, which must be a valid id of that type. ok is
// false when one is not (or the template is malformed, which mount refuses
// at start-up).
func expand(template string, param func(typ string) string) (path string, ok bool) {
	lits, types, err := splitTemplate(template)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	for i, typ := range types {
		v := param(typ)
		if !validID(typ, v) {
			return "", false
		}
		b.WriteString(lits[i])
		b.WriteString(v)
	}
	b.WriteString(lits[len(types)])
	return b.String(), true
}

// placeholders lists the id types a template names.
func placeholders(template string) ([]string, error) {
	_, types, err := splitTemplate(template)
	return types, err
}

// forwardJSON sends body as JSON with the browser's forwardable headers and
// relays the service's answer: the tail of every handler that builds (or
// binds) a body itself before forwarding it.
func (s *Server) forwardJSON(c *fiber.Ctx, method, path string, body []byte) error {
	header, err := forwardable(c)
	if err != nil {
		return err
	}
	header.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	r, err := s.up.do(c.UserContext(), call{method: method, path: path, header: header, body: body})
	if err != nil {
		return s.unreachable(c.UserContext(), err)
	}
	return writeReply(c, r)
}

// endUser is the browser a call to the service is made for (withDeadline).
type endUser struct{ ip, device string }

type endUserKey struct{}

func withEndUser(ctx context.Context, eu endUser) context.Context {
	return context.WithValue(ctx, endUserKey{}, eu)
}
