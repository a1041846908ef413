// Package devoidc is a small OpenID Connect issuer that runs in-process on
// loopback, so that OAUTH wallet credentials can be exercised in
// development and tests without the internet or a real provider account.
//
// It implements just enough of OpenID Connect for that: discovery, a JWKS
// with one ES256 key made at start, and the implicit flow
// (response_type=id_token, response_mode=fragment) with a sign-in page that
// asks only for an e-mail address. Anyone who can reach it can become
// anyone, which is why it listens on loopback only and says on its page
// that it is not a real identity provider. Its tokens carry what the
// service's verifier (paywallet/service/oidc) checks, so the same code path
// runs in development as in production.
//
// It imports only the standard library and paywallet/internal/loopback.
package devoidc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"paywallet/internal/loopback"
)

// Config configures Start. Zero values take the documented defaults.
type Config struct {
	// Addr is the listen address; it must be a loopback address or
	// localhost. Default "127.0.0.1:0" (any free port).
	Addr string
	// ClientID is the only client the issuer knows. Default "paywallet-dev".
	ClientID string
	// RedirectURIs are the redirect_uri values accepted, compared exactly.
	// More can be added after start with AllowRedirect.
	RedirectURIs []string
	// Now is the clock for iat and exp. Default time.Now.
	Now func() time.Time
	// TokenTTL is exp minus iat. Default 10 minutes.
	TokenTTL time.Duration
}

// Error is the package's error type: a configuration that Start refuses,
// claims Mint cannot encode, or a Close that had to cut requests off.
type Error struct {
	Op  string // "start", "mint" or "close"
	Msg string
	Err error
}

func (e *Error) Error() string {
	s := "devoidc: " + e.Op + ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Issuer is a running development issuer.
type Issuer struct {
	url      string
	clientID string
	ttl      time.Duration
	now      func() time.Time
	key      *ecdsa.PrivateKey
	kid      string
	port     string

	discovery []byte
	jwks      []byte

	mu        sync.RWMutex
	redirects map[string]bool

	srv       *http.Server
	served    chan struct{} // closed when Serve returns
	closeOnce sync.Once
	closeErr  error
}

// Start makes a signing key, listens on cfg.Addr and serves the issuer
// until Close.
func Start(cfg Config) (*Issuer, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.ClientID == "" {
		cfg.ClientID = "paywallet-dev"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.TokenTTL == 0 {
		cfg.TokenTTL = 10 * time.Minute
	}
	if cfg.TokenTTL < 0 {
		return nil, &Error{Op: "start", Msg: "negative TokenTTL"}
	}
	if err := checkLoopbackAddr(cfg.Addr); err != nil {
		return nil, &Error{Op: "start", Msg: "address " + cfg.Addr, Err: err}
	}
	is := &Issuer{
		clientID:  cfg.ClientID,
		ttl:       cfg.TokenTTL,
		now:       cfg.Now,
		redirects: make(map[string]bool),
		served:    make(chan struct{}),
	}
	for _, u := range cfg.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return nil, &Error{Op: "start", Msg: "redirect URI " + u, Err: err}
		}
		is.redirects[u] = true
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, &Error{Op: "start", Msg: "generating key", Err: err}
	}
	is.key = key

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, &Error{Op: "start", Msg: "listen", Err: err}
	}
	// "localhost" is resolved by the system; make sure it really was
	// loopback before serving anything.
	tcp, ok := ln.Addr().(*net.TCPAddr)
	if !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, &Error{Op: "start", Msg: "address " + cfg.Addr, Err: errors.New("did not resolve to a loopback address")}
	}
	is.url = "http://" + ln.Addr().String()
	is.port = fmt.Sprint(tcp.Port)
	if err := is.buildDocuments(); err != nil {
		ln.Close()
		return nil, &Error{Op: "start", Msg: "building documents", Err: err}
	}

	is.srv = &http.Server{
		Handler:           is.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	go func() {
		defer close(is.served)
		is.srv.Serve(ln) // returns ErrServerClosed on Close
	}()
	return is, nil
}

// URL is the issuer identifier, e.g. "http://127.0.0.1:43123", with no
// trailing slash. It is the iss of every token and the base of every
// endpoint.
func (is *Issuer) URL() string { return is.url }

// ClientID is the client id tokens are issued to (their aud).
func (is *Issuer) ClientID() string { return is.clientID }

// AllowRedirect registers one more exact redirect_uri. It exists because
// the wallet under test often gets its port only after the issuer is up.
// It panics if uri is not an absolute http or https URL without a
// fragment: that is a mistake in the calling code, not a runtime condition.
func (is *Issuer) AllowRedirect(uri string) {
	if err := checkRedirectURI(uri); err != nil {
		panic("devoidc: AllowRedirect(" + uri + "): " + err.Error())
	}
	is.mu.Lock()
	is.redirects[uri] = true
	is.mu.Unlock()
}

func (is *Issuer) redirectAllowed(uri string) bool {
	is.mu.RLock()
	defer is.mu.RUnlock()
	return is.redirects[uri]
}

// SubjectFor is the sub the issuer gives an e-mail address: "dev-" and the
// first 20 hex digits of SHA-256 of the lower-cased address. It is stable,
// so a developer who signs in again with the same address is the same
// user, and it does not reveal the address.
func SubjectFor(email string) string {
	h := sha256.Sum256([]byte(strings.ToLower(email)))
	return "dev-" + hex.EncodeToString(h[:])[:20]
}

// SubjectFor is the package function SubjectFor, offered on the Issuer for
// callers that hold only an *Issuer.
func (is *Issuer) SubjectFor(email string) string { return SubjectFor(email) }

// Close stops the server, letting requests in flight finish for up to two
// seconds before cutting them off. Calling it again returns the first
// result.
func (is *Issuer) Close() error {
	is.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := is.srv.Shutdown(ctx); err != nil {
			is.srv.Close()
			is.closeErr = &Error{Op: "close", Msg: "forced shutdown", Err: err}
		}
		<-is.served
	})
	return is.closeErr
}

// buildDocuments renders discovery and the JWKS once: neither changes
// while the issuer runs.
func (is *Issuer) buildDocuments() error {
	pub, err := is.key.PublicKey.Bytes() // 0x04 ‖ x ‖ y
	if err != nil {
		return err
	}
	x := base64.RawURLEncoding.EncodeToString(pub[1:33])
	y := base64.RawURLEncoding.EncodeToString(pub[33:])
	// The kid is the RFC 7638 thumbprint: derived from the key, so it
	// changes exactly when the key does.
	thumb := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + x + `","y":"` + y + `"}`))
	is.kid = base64.RawURLEncoding.EncodeToString(thumb[:])

	is.jwks, err = json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "EC", "crv": "P-256", "x": x, "y": y,
		"kid": is.kid, "use": "sig", "alg": "ES256",
	}}})
	if err != nil {
		return err
	}
	is.discovery, err = json.Marshal(map[string]any{
		"issuer":                                is.url,
		"authorization_endpoint":                is.url + "/authorize",
		"jwks_uri":                              is.url + "/jwks",
		"response_types_supported":              []string{"id_token"},
		"response_modes_supported":              []string{"fragment"},
		"grant_types_supported":                 []string{"implicit"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"ES256"},
		"scopes_supported":                      []string{"openid", "email"},
		"claims_supported":                      []string{"iss", "sub", "aud", "iat", "exp", "nonce", "email", "email_verified"},
	})
	return err
}

// checkLoopbackAddr refuses listen addresses that could be reached from
// another machine, including the empty host (all interfaces).
func checkLoopbackAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if loopback.IsName(host) {
		return nil
	}
	return errors.New("not a loopback address")
}

// checkRedirectURI accepts absolute http(s) URLs without a fragment (the
// token is delivered in the fragment) and with a plain host, since the
// origin is written into a Content-Security-Policy header.
func checkRedirectURI(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("scheme must be http or https")
	}
	if u.Host == "" || u.User != nil || strings.Contains(s, "#") {
		return errors.New("must have a host and no user info or fragment")
	}
	for _, c := range u.Host {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune(".-:[]", c)) {
			return errors.New("host has unexpected characters")
		}
	}
	return nil
}

func origin(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
