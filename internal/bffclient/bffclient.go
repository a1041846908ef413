// Package bffclient is a Go client of the BFF's browser API that behaves
// like the wallet page: it keeps the session cookie, sends the CSRF and
// same-origin headers, and does the wallet cryptography itself (with
// shared/walletcrypto) where the page would call the wasm module. Tests use
// it to drive a full login over real HTTP without a browser, and to inspect
// every response the BFF sends.
package bffclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

// Client talks to one BFF.
type Client struct {
	// Base is the BFF origin, e.g. http://localhost:8080.
	Base string
	// Transport defaults to http.DefaultTransport.
	Transport http.RoundTripper
	// OnResponse, when set, sees every response (tests scan them).
	OnResponse func(Response)

	cookie string
}

// Response is one answer of the BFF, fully read.
type Response struct {
	Method, Path string
	Status       int
	Header       http.Header
	Body         []byte
}

// Decode unmarshals the body.
func (r Response) Decode(v any) error { return json.Unmarshal(r.Body, v) }

// Do sends one request. Paths under /api/ get the X-CSRF and same-origin
// headers a browser page would send. The cookie is kept by hand: Go's
// cookie jar never sends a Secure cookie over http://localhost, browsers do.
func (c *Client) Do(ctx context.Context, method, path string, body any, headers map[string]string) (Response, error) {
	var rdr io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return Response{}, err
		}
		rdr = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, rdr)
	if err != nil {
		return Response{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept-Encoding", "br, gzip")
	if strings.HasPrefix(path, "/api/") {
		req.Header.Set("X-CSRF", "1")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("Origin", c.Base)
	}
	if c.cookie != "" {
		req.Header.Set("Cookie", c.cookie)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	tr := c.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, err
	}
	for _, sc := range resp.Cookies() {
		if sc.MaxAge < 0 || sc.Value == "" {
			c.cookie = ""
			continue
		}
		c.cookie = sc.Name + "=" + sc.Value
	}
	r := Response{Method: method, Path: path, Status: resp.StatusCode, Header: resp.Header, Body: b}
	if c.OnResponse != nil {
		c.OnResponse(r)
	}
	return r, nil
}

// Config is the part of GET /api/config a client needs.
type Config struct {
	Mode               string `json:"mode"`
	OTPSignerPublicKey string `json:"otpSignerPublicKey"`
	WasmURL            string `json:"wasmUrl"`
	DevMailbox         bool   `json:"devMailbox"`
}

// Config fetches GET /api/config.
func (c *Client) Config(ctx context.Context) (Config, error) {
	var cfg Config
	r, err := c.Do(ctx, "GET", "/api/config", nil, nil)
	if err != nil {
		return cfg, err
	}
	if r.Status != http.StatusOK {
		return cfg, fmt.Errorf("config: %d %s", r.Status, r.Body)
	}
	return cfg, r.Decode(&cfg)
}

// LoginEmailOTP signs in as the page does: start the login, check the
// target bundle against the signer key pinned by /api/config, seal the code
// (obtained from readCode once it was e-mailed) with a fresh key, run leg 1,
// stamp its payload and run leg 2. It returns the session and the key that
// is now the session's signing key.
func (c *Client) LoginEmailOTP(ctx context.Context, email string, readCode func(email string) (string, error)) (wire.Session, *walletcrypto.PrivateKey, error) {
	var sess wire.Session
	cfg, err := c.Config(ctx)
	if err != nil {
		return sess, nil, err
	}
	pinned, err := walletcrypto.ParsePublicKeyHex(cfg.OTPSignerPublicKey)
	if err != nil {
		return sess, nil, fmt.Errorf("config: signer key: %w", err)
	}
	start, err := c.Do(ctx, "POST", "/api/login/start", map[string]string{"email": email}, nil)
	if err != nil {
		return sess, nil, err
	}
	if start.Status != http.StatusOK {
		return sess, nil, fmt.Errorf("login start: %d %s", start.Status, start.Body)
	}
	var st struct {
		OTPEncryptionTargetBundle string `json:"otpEncryptionTargetBundle"`
	}
	if err := start.Decode(&st); err != nil {
		return sess, nil, err
	}
	target, err := walletcrypto.VerifyTargetBundle(st.OTPEncryptionTargetBundle, pinned)
	if err != nil {
		return sess, nil, err
	}
	code, err := readCode(email)
	if err != nil {
		return sess, nil, err
	}
	key, err := walletcrypto.GenerateKey()
	if err != nil {
		return sess, nil, err
	}
	sealed, err := walletcrypto.SealOTP(target, code, key.PublicKey())
	if err != nil {
		return sess, nil, err
	}
	body := map[string]string{"type": wire.TypeEmailOTP, "encryptedOtpBundle": sealed}
	leg1, err := c.Do(ctx, "POST", "/api/login/verify", body, nil)
	if err != nil {
		return sess, nil, err
	}
	if leg1.Status != http.StatusAccepted {
		return sess, nil, fmt.Errorf("login leg 1: %d %s", leg1.Status, leg1.Body)
	}
	var ch wire.SignedRequestChallenge
	if err := leg1.Decode(&ch); err != nil {
		return sess, nil, err
	}
	stamp, err := walletcrypto.SignStamp(key, []byte(ch.PayloadToSign))
	if err != nil {
		return sess, nil, err
	}
	leg2, err := c.Do(ctx, "POST", "/api/login/verify", body, map[string]string{
		wire.HeaderWalletSignature: stamp,
		wire.HeaderRequestID:       ch.RequestID,
	})
	if err != nil {
		return sess, nil, err
	}
	if leg2.Status != http.StatusOK {
		return sess, nil, fmt.Errorf("login leg 2: %d %s", leg2.Status, leg2.Body)
	}
	return sess, key, leg2.Decode(&sess)
}

// MailboxCode reads the newest code for email from the BFF's dev mailbox.
func (c *Client) MailboxCode(ctx context.Context, email string) (string, error) {
	r, err := c.Do(ctx, "GET", "/dev/mailbox/latest?address="+url.QueryEscape(email), nil, nil)
	if err != nil {
		return "", err
	}
	var m struct {
		Code string `json:"code"`
	}
	if r.Status != http.StatusOK || r.Decode(&m) != nil || len(m.Code) != 6 {
		return "", fmt.Errorf("no code for %s in the dev mailbox (status %d)", email, r.Status)
	}
	return m.Code, nil
}

// Cookie returns the session cookie the client holds ("name=value", or
// empty), so that a second client can act as the same browser, e.g.
// through another BFF instance.
func (c *Client) Cookie() string { return c.cookie }

// SetCookie makes the client send cookie ("name=value") from now on.
func (c *Client) SetCookie(cookie string) { c.cookie = cookie }
