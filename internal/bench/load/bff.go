package load

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"paywallet/bff"
	"paywallet/internal/bffclient"
)

// bffAccounts is how many external accounts the signed-in customer has, so
// that the forwarded list carries a realistic page.
const bffAccounts = 5

// RunBFF measures what the BFF adds to a request, at each of o.BFFClients.
// A production-mode service on SQLite is served on a loopback port as in
// RunService, and a BFF (bff.New, production mode, talking to the service
// over loopback HTTP with its default transport, as a standalone BFF does)
// on another; the login limits are raised so that many logins can be
// prepared. Each operation is measured directly on the service and through
// the BFF in alternation (see compare):
//
//   - list-external-accounts. Direct: GET
//     /customers/external-accounts?customerId=<id>&limit=20 with the
//     platform Basic credential. Via the BFF: GET
//     /api/customers/external-accounts?limit=20 with the cookie of a
//     session signed in with internal/bffclient (e-mail OTP), X-CSRF: 1 and
//     Sec-Fetch-Site: same-origin, as the wallet page sends it; the BFF
//     binds customerId from the cookie and forwards. The customer has five
//     accounts; both answer 200 with totalCount 5.
//   - login-verify, leg 1 of the e-mail OTP verification (the leg that
//     opens the sealed code). Direct: POST
//     /auth/credentials/{id}/verify {"type":"EMAIL_OTP","encryptedOtpBundle":…}
//     with the platform credential. Via the BFF: POST /api/login/verify with
//     the same body and the cookie of a pending login. Both answer 202 with
//     a payloadToSign. Each request uses up one pending login, prepared
//     before the timed part: for direct, a customer made with POST
//     /customers and a code asked for with POST
//     /auth/credentials/{id}/challenge; via the BFF, POST /api/login/start
//     with a fresh cookie (which does the same through the BFF). Every
//     login has its own e-mail address, the code is read from the capture
//     mailbox and sealed with walletcrypto as the wallet page does.
//     These cells are bounded by count (250 requests per side per second of
//     Duration).
func RunBFF(ctx context.Context, o Options) ([]BFFCell, error) {
	p, err := o.plan()
	if err != nil {
		return nil, err
	}
	s, err := startStack(ctx, p, "sqlite", "bff")
	if err != nil {
		return nil, err
	}
	defer s.close()
	base, err := s.startBFF()
	if err != nil {
		return nil, err
	}
	via := &api{hc: s.api.hc, base: base, header: http.Header{
		bff.HeaderCSRF:   {"1"},
		"Sec-Fetch-Site": {"same-origin"},
	}}

	// The signed-in browser session.
	email := fmt.Sprintf("bff-user-%d@bench.example.com", s.seq.Add(1))
	cookie, customerID, err := s.signInThroughBFF(ctx, base, email)
	if err != nil {
		return nil, err
	}
	for range bffAccounts {
		if _, err := s.createAccount(ctx, customerID); err != nil {
			return nil, err
		}
	}

	var cells []BFFCell
	total := []byte(`"totalCount":` + strconv.Itoa(bffAccounts))
	list := func(a *api, path string, hdr ...string) func(context.Context, int, int) error {
		return func(ctx context.Context, _, _ int) error {
			status, body, err := a.do(ctx, "GET", path, nil, hdr...)
			switch {
			case err != nil:
				return err
			case status != http.StatusOK || !bytes.Contains(body, total):
				return fmt.Errorf("GET %s: status %d: %s", path, status, clip(body))
			}
			return nil
		}
	}
	for _, clients := range p.bffClients {
		c := BFFCell{Op: "list-external-accounts", Clients: clients}
		c.Direct, c.ViaBFF = compare(ctx, clients, p.dur, p.cap,
			list(s.api, "/customers/external-accounts?limit=20&customerId="+customerID),
			list(via, "/api/customers/external-accounts?limit=20", "Cookie", cookie))
		logCell(p, "direct", c.Op, c.Direct, "")
		logCell(p, "via-bff", c.Op, c.ViaBFF, "")
		cells = append(cells, c.withAdded())
		if err := ctx.Err(); err != nil {
			return cells, err
		}
	}

	for _, clients := range p.bffClients {
		c := BFFCell{Op: "login-verify", Clients: clients}
		n := p.loginCap + compareRounds*clients*WarmupCalls
		t0 := time.Now()
		direct := make([]pendingLogin, n)
		if err := parallel(ctx, n, 8, func(ctx context.Context, i int) error {
			cust, err := s.newCustomer(ctx, "login-direct")
			if err == nil {
				direct[i], err = s.startLogin(ctx, cust)
			}
			return err
		}); err != nil {
			return cells, err
		}
		t1 := time.Now()
		pending := make([]bffLogin, n)
		if err := parallel(ctx, n, 8, func(ctx context.Context, i int) error {
			var err error
			pending[i], err = s.startBFFLogin(ctx, base)
			return err
		}); err != nil {
			return cells, err
		}
		p.log("%d pending logins made directly in %.1fs, %d through the BFF in %.1fs",
			n, t1.Sub(t0).Seconds(), n, time.Since(t1).Seconds())
		var nextDirect, nextVia atomic.Int64
		c.Direct, c.ViaBFF = compare(ctx, clients, p.dur, p.loginCap,
			func(ctx context.Context, _, _ int) error {
				i := int(nextDirect.Add(1)) - 1
				if i >= n {
					return ErrStop
				}
				return verifyLeg1(ctx, s.api, "/auth/credentials/"+direct[i].credential+"/verify", direct[i].body)
			},
			func(ctx context.Context, _, _ int) error {
				i := int(nextVia.Add(1)) - 1
				if i >= n {
					return ErrStop
				}
				return verifyLeg1(ctx, via, "/api/login/verify", pending[i].body, "Cookie", pending[i].cookie)
			})
		logCell(p, "direct", c.Op, c.Direct, "")
		logCell(p, "via-bff", c.Op, c.ViaBFF, "")
		cells = append(cells, c.withAdded())
		if err := ctx.Err(); err != nil {
			return cells, err
		}
	}
	return cells, nil
}

// compareRounds is how many times compare alternates between its two
// operations.
const compareRounds = 2

// compare measures two operations in alternation, direct, via, direct,
// via, each for dur/compareRounds (and at most maxRequests/compareRounds
// requests), and merges the samples of each. The machine is shared, so
// whatever else slows it down during the cell falls on both sides rather
// than on whichever ran second.
func compare(ctx context.Context, clients int, dur time.Duration, maxRequests int, direct, via func(context.Context, int, int) error) (Stats, Stats) {
	var d, v sample
	for range compareRounds {
		d.add(run(ctx, clients, dur/compareRounds, maxRequests/compareRounds, direct))
		v.add(run(ctx, clients, dur/compareRounds, maxRequests/compareRounds, via))
	}
	return d.stats(), v.stats()
}

func (c BFFCell) withAdded() BFFCell {
	c.AddedP50Ms = c.ViaBFF.P50Ms - c.Direct.P50Ms
	c.AddedP99Ms = c.ViaBFF.P99Ms - c.Direct.P99Ms
	return c
}

// startBFF serves a BFF in front of the stack's service on a loopback port
// and returns its origin. It is stopped before the service.
func (s *stack) startBFF() (string, error) {
	logs := newLogHandler(s.log, "bff: ", slog.LevelError)
	s.closers = append(s.closers, logs.flush)
	srv, err := bff.New(bff.Config{
		ServiceURL:         s.api.base,
		PlatformCredential: platformID + ":" + platformSecret,
		Mode:               bff.ModeProduction,
		OTPSignerPublicKey: s.svc.SignerPublicKey().UncompressedHex(),
		Logger:             slog.New(logs),
		// Every prepared login starts from 127.0.0.1.
		LoginPerIP:    bff.Limit{Max: 1 << 30, Window: time.Minute},
		LoginPerEmail: bff.Limit{Max: 1 << 30, Window: time.Minute},
	})
	if err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go func() { _ = srv.Listener(ln) }()
	s.closers = append(s.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String(), nil
}

// signInThroughBFF signs email in through the BFF at base as a browser
// does (e-mail code from the stack's mailbox) and returns the session's
// cookie and its customer id.
func (s *stack) signInThroughBFF(ctx context.Context, base, email string) (cookie, customerID string, err error) {
	cl := &bffclient.Client{Base: base, Transport: s.tr, OnResponse: func(r bffclient.Response) {
		if c := cookieOf(r.Header); c != "" {
			cookie = c
		}
	}}
	if _, _, err := cl.LoginEmailOTP(ctx, email, func(address string) (string, error) {
		if m, ok := s.box.Latest(address); ok {
			return m.Code, nil
		}
		return "", fmt.Errorf("no code for %s", address)
	}); err != nil {
		return "", "", fmt.Errorf("load: sign in through the BFF: %w", err)
	}
	me, err := cl.Do(ctx, "GET", "/api/me", nil, nil)
	var who struct{ CustomerID string }
	if err == nil && (me.Status != http.StatusOK || me.Decode(&who) != nil || who.CustomerID == "") {
		err = fmt.Errorf("GET /api/me: %d %s", me.Status, clip(me.Body))
	}
	if err != nil {
		return "", "", err
	}
	return cookie, who.CustomerID, nil
}

// bffLogin is a login started through the BFF: the cookie of its pending
// session and the sealed leg-1 body.
type bffLogin struct {
	cookie string
	body   []byte
}

// startBFFLogin starts a login for a new e-mail address as the wallet page
// does (POST /api/login/start from a browser without a cookie) and seals
// the e-mailed code.
func (s *stack) startBFFLogin(ctx context.Context, base string) (bffLogin, error) {
	var out bffLogin
	cl := &bffclient.Client{Base: base, Transport: s.tr, OnResponse: func(r bffclient.Response) {
		if c := cookieOf(r.Header); c != "" {
			out.cookie = c
		}
	}}
	email := fmt.Sprintf("login-bff-%d@bench.example.com", s.seq.Add(1))
	r, err := cl.Do(ctx, "POST", "/api/login/start", map[string]string{"email": email}, nil)
	if err != nil {
		return out, err
	}
	var st struct {
		OTPEncryptionTargetBundle string `json:"otpEncryptionTargetBundle"`
	}
	if r.Status != http.StatusOK || r.Decode(&st) != nil || out.cookie == "" {
		return out, fmt.Errorf("POST /api/login/start: %d %s", r.Status, clip(r.Body))
	}
	out.body, _, err = s.sealCode(st.OTPEncryptionTargetBundle, email)
	return out, err
}

// verifyLeg1 sends leg 1 of a verification and expects the 202 challenge.
func verifyLeg1(ctx context.Context, a *api, path string, body []byte, hdr ...string) error {
	status, b, err := a.do(ctx, "POST", path, body, hdr...)
	switch {
	case err != nil:
		return err
	case status != http.StatusAccepted || !bytes.Contains(b, []byte(`"payloadToSign"`)):
		return fmt.Errorf("POST %s: status %d, want 202: %s", path, status, clip(b))
	}
	return nil
}

// cookieOf returns "name=value" of the BFF's session cookie set by a
// response, "" when it sets none.
func cookieOf(h http.Header) string {
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == bff.CookieName && c.Value != "" && c.MaxAge >= 0 {
			return c.Name + "=" + c.Value
		}
	}
	return ""
}
