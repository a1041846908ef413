package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"paywallet/service"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

// browserClient plays a browser against the BFF over real HTTP: it keeps the
// cookie (Go's cookie jar will not send a Secure cookie over http://localhost,
// browsers do), sends the CSRF header and the same-origin headers, and
// records every response for inspection.
type browserClient struct {
	t         *testing.T
	base      string
	cookie    string
	responses []recorded
}

type recorded struct {
	method, path string
	status       int
	header       http.Header
	body         []byte
}

func (c *browserClient) do(method, path string, body any, headers map[string]string) recorded {
	c.t.Helper()
	var rdr io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rdr = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rdr)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept-Encoding", "br, gzip")
	if strings.HasPrefix(path, "/api/") {
		req.Header.Set("X-CSRF", "1")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("Origin", c.base)
	}
	if c.cookie != "" {
		req.Header.Set("Cookie", c.cookie)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, sc := range resp.Cookies() {
		if sc.MaxAge < 0 || sc.Value == "" {
			c.cookie = ""
			continue
		}
		c.cookie = sc.Name + "=" + sc.Value
	}
	r := recorded{method: method, path: path, status: resp.StatusCode, header: resp.Header, body: b}
	c.responses = append(c.responses, r)
	return r
}

// TestLoginLeaksNoPlatformSecret walks every BFF response of a full login
// (pages, config, wasm, login legs, me, sessions, logout) and asserts the
// platform secret appears in none, in any form the BFF could leak it.
func TestLoginLeaksNoPlatformSecret(t *testing.T) {
	s := startStack(t, service.ModeProduction)
	c := &browserClient{t: t, base: s.url}
	const email = "lin@example.com"

	c.do("GET", "/", nil, nil)
	cfgResp := c.do("GET", "/api/config", nil, nil)
	var cfg map[string]any
	if err := json.Unmarshal(cfgResp.body, &cfg); err != nil || cfgResp.status != 200 {
		t.Fatalf("config: %d %s", cfgResp.status, cfgResp.body)
	}
	if u, ok := cfg["wasmUrl"].(string); ok {
		if r := c.do("GET", u, nil, nil); r.status != 200 {
			t.Fatalf("wasm %s: %d", u, r.status)
		}
	}
	start := c.do("POST", "/api/login/start", map[string]string{"email": email}, nil)
	if start.status != 200 {
		t.Fatalf("login start: %d %s", start.status, start.body)
	}
	var st struct {
		OTPEncryptionTargetBundle string `json:"otpEncryptionTargetBundle"`
	}
	json.Unmarshal(start.body, &st)
	target, err := walletcrypto.VerifyTargetBundle(st.OTPEncryptionTargetBundle, s.svc.SignerPublicKey())
	if err != nil {
		t.Fatal(err)
	}
	client, _ := walletcrypto.GenerateKey()
	sealed, _ := walletcrypto.SealOTP(target, s.latestCode(email), client.PublicKey())
	body := map[string]string{"type": "EMAIL_OTP", "encryptedOtpBundle": sealed}
	leg1 := c.do("POST", "/api/login/verify", body, nil)
	if leg1.status != 202 {
		t.Fatalf("leg 1: %d %s", leg1.status, leg1.body)
	}
	var ch wire.SignedRequestChallenge
	json.Unmarshal(leg1.body, &ch)
	stamp, _ := walletcrypto.SignStamp(client, []byte(ch.PayloadToSign))
	leg2 := c.do("POST", "/api/login/verify", body, map[string]string{wire.HeaderWalletSignature: stamp, wire.HeaderRequestID: ch.RequestID})
	if leg2.status != 200 {
		t.Fatalf("leg 2: %d %s", leg2.status, leg2.body)
	}
	if r := c.do("GET", "/api/me", nil, nil); r.status != 200 {
		t.Fatalf("me: %d %s", r.status, r.body)
	}
	if r := c.do("GET", "/api/auth/sessions", nil, nil); r.status != 200 {
		t.Fatalf("sessions: %d %s", r.status, r.body)
	}
	c.do("GET", "/dev/mailbox", nil, nil)
	if r := c.do("POST", "/api/logout", nil, nil); r.status/100 != 2 {
		t.Fatalf("logout: %d %s", r.status, r.body)
	}
	if r := c.do("GET", "/api/me", nil, nil); r.status != 401 {
		t.Fatalf("me after logout: %d", r.status)
	}

	basic := base64.StdEncoding.EncodeToString([]byte(platformID + ":" + platformSecret))
	forbidden := []string{platformSecret, basic, base64.RawURLEncoding.EncodeToString([]byte(platformSecret)), strings.ToUpper(platformSecret)}
	for _, r := range c.responses {
		var all bytes.Buffer
		r.header.Write(&all)
		all.Write(r.body)
		for _, f := range forbidden {
			if bytes.Contains(all.Bytes(), []byte(f)) {
				t.Errorf("%s %s (%d) contains the platform secret (form %q)", r.method, r.path, r.status, f)
			}
		}
	}
	if len(c.responses) < 10 {
		t.Fatalf("only %d responses inspected", len(c.responses))
	}
}
