package mail

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	netmail "net/mail"
	"net/textproto"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// ---------------------------------------------------------------------------
// Throwaway PKI: one self-signed ECDSA P-256 certificate for 127.0.0.1,
// generated once per test binary.

var (
	pkiOnce      sync.Once
	pkiServerTLS *tls.Config
	pkiRoots     *x509.CertPool
	pkiErr       error
)

// testPKI returns the server TLS configuration and a pool that trusts it.
func testPKI(t *testing.T) (*tls.Config, *x509.CertPool) {
	t.Helper()
	pkiOnce.Do(func() {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			pkiErr = err
			return
		}
		serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
		if err != nil {
			pkiErr = err
			return
		}
		tmpl := &x509.Certificate{
			SerialNumber:          serial,
			Subject:               pkix.Name{CommonName: "paywallet mail test"},
			NotBefore:             time.Now().Add(-time.Hour),
			NotAfter:              time.Now().Add(24 * time.Hour),
			KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
			ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			BasicConstraintsValid: true,
			IsCA:                  true,
			IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
			DNSNames:              []string{"localhost"},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			pkiErr = err
			return
		}
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			pkiErr = err
			return
		}
		pkiRoots = x509.NewCertPool()
		pkiRoots.AddCert(cert)
		pkiServerTLS = &tls.Config{
			Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}},
			MinVersion:   tls.VersionTLS12,
		}
	})
	if pkiErr != nil {
		t.Fatalf("generate test certificate: %v", pkiErr)
	}
	return pkiServerTLS, pkiRoots
}

// ---------------------------------------------------------------------------
// A small SMTP server speaking enough of RFC 5321 for net/smtp.

type smtpOptions struct {
	startTLS    bool   // advertise and accept STARTTLS
	implicitTLS bool   // TLS from the first byte (tls.Listen)
	authPlain   bool   // advertise and accept AUTH PLAIN
	user, pass  string // the only credentials AUTH PLAIN accepts
	requireAuth bool   // MAIL FROM needs a successful AUTH first
	rejectRcpt  bool   // answer every RCPT TO with 550
}

// envelope is one message the server accepted.
type envelope struct {
	from     string
	rcpts    []string
	data     string // after dot-unstuffing, CRLF line endings as received
	tls      bool   // TLS was active when DATA was received
	authUser string // user of a successful AUTH on this connection, or ""
}

type testSMTPServer struct {
	opts    smtpOptions
	tlsConf *tls.Config
	ln      net.Listener
	addr    string
	wg      sync.WaitGroup

	mu         sync.Mutex
	conns      int
	open       map[net.Conn]struct{}
	envelopes  []envelope
	commands   []string // verbs in arrival order, across connections
	violations []string // protocol mistakes of the client
}

func newTestSMTPServer(t *testing.T, opts smtpOptions) *testSMTPServer {
	t.Helper()
	tlsConf, _ := testPKI(t)
	var ln net.Listener
	var err error
	if opts.implicitTLS {
		ln, err = tls.Listen("tcp", "127.0.0.1:0", tlsConf)
	} else {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	s := &testSMTPServer{opts: opts, tlsConf: tlsConf, ln: ln, addr: ln.Addr().String(), open: map[net.Conn]struct{}{}}
	s.wg.Go(s.acceptLoop)
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for c := range s.open {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
		for _, v := range s.Violations() {
			t.Errorf("SMTP client protocol violation: %s", v)
		}
	})
	return s
}

func (s *testSMTPServer) acceptLoop() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns++
		s.open[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Go(func() {
			defer func() {
				s.mu.Lock()
				delete(s.open, c)
				s.mu.Unlock()
			}()
			s.serve(c)
		})
	}
}

func (s *testSMTPServer) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

func (s *testSMTPServer) Envelopes() []envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.envelopes)
}

func (s *testSMTPServer) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.commands)
}

func (s *testSMTPServer) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.violations)
}

func (s *testSMTPServer) violation(format string, args ...any) {
	s.mu.Lock()
	s.violations = append(s.violations, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

// smtpSession is the state of one connection.
type smtpSession struct {
	conn     net.Conn
	r        *bufio.Reader
	tls      bool
	helo     bool
	authUser string
	from     string
	hasFrom  bool
	rcpts    []string
}

func (ss *smtpSession) reply(lines ...string) error {
	_, err := io.WriteString(ss.conn, strings.Join(lines, "\r\n")+"\r\n")
	return err
}

// readLine reads one CRLF-terminated line and returns it without the CRLF.
func (s *testSMTPServer) readLine(ss *smtpSession) (string, error) {
	line, err := ss.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(line, "\r\n") {
		s.violation("line %q is not terminated by CRLF", line)
		return strings.TrimSuffix(line, "\n"), nil
	}
	return strings.TrimSuffix(line, "\r\n"), nil
}

func (s *testSMTPServer) serve(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	ss := &smtpSession{conn: conn, r: bufio.NewReader(conn)}
	_, ss.tls = conn.(*tls.Conn)
	if ss.reply("220 mx.test.invalid ESMTP test server ready") != nil {
		return
	}
	for {
		line, err := s.readLine(ss)
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		verb = strings.ToUpper(verb)
		s.mu.Lock()
		s.commands = append(s.commands, verb)
		s.mu.Unlock()

		var werr error
		switch verb {
		case "EHLO", "HELO":
			ss.helo, ss.from, ss.hasFrom, ss.rcpts = true, "", false, nil
			if verb == "HELO" {
				werr = ss.reply("250 mx.test.invalid")
				break
			}
			ext := []string{"mx.test.invalid greets " + arg, "8BITMIME"}
			if s.opts.startTLS && !ss.tls {
				ext = append(ext, "STARTTLS")
			}
			if s.opts.authPlain {
				ext = append(ext, "AUTH PLAIN")
			}
			lines := make([]string, len(ext))
			for i, e := range ext {
				sep := "-"
				if i == len(ext)-1 {
					sep = " "
				}
				lines[i] = "250" + sep + e
			}
			werr = ss.reply(lines...)

		case "STARTTLS":
			if !s.opts.startTLS || ss.tls {
				werr = ss.reply("502 5.5.1 STARTTLS not available")
				break
			}
			if ss.r.Buffered() > 0 {
				s.violation("client pipelined %d bytes after STARTTLS", ss.r.Buffered())
				return
			}
			if ss.reply("220 2.0.0 Ready to start TLS") != nil {
				return
			}
			tc := tls.Server(conn, s.tlsConf)
			if err := tc.Handshake(); err != nil {
				return
			}
			// RFC 3207: forget everything learned before the upgrade.
			ss.conn, ss.r, ss.tls = tc, bufio.NewReader(tc), true
			ss.helo, ss.authUser, ss.from, ss.hasFrom, ss.rcpts = false, "", "", false, nil

		case "AUTH":
			werr = s.auth(ss, arg)

		case "*":
			werr = ss.reply("501 5.0.0 AUTH cancelled")

		case "MAIL":
			switch {
			case !ss.helo:
				werr = ss.reply("503 5.5.1 EHLO first")
			case s.opts.requireAuth && ss.authUser == "":
				werr = ss.reply("530 5.7.0 Authentication required")
			default:
				addr, ok := pathArg(arg, "FROM:")
				if !ok {
					werr = ss.reply("501 5.5.4 bad MAIL syntax")
					break
				}
				ss.from, ss.hasFrom, ss.rcpts = addr, true, nil
				werr = ss.reply("250 2.1.0 OK")
			}

		case "RCPT":
			addr, ok := pathArg(arg, "TO:")
			switch {
			case !ss.hasFrom:
				werr = ss.reply("503 5.5.1 MAIL first")
			case !ok || addr == "":
				werr = ss.reply("501 5.5.4 bad RCPT syntax")
			case s.opts.rejectRcpt:
				werr = ss.reply("550 5.1.1 mailbox unavailable")
			default:
				ss.rcpts = append(ss.rcpts, addr)
				werr = ss.reply("250 2.1.5 OK")
			}

		case "DATA":
			if len(ss.rcpts) == 0 {
				werr = ss.reply("503 5.5.1 RCPT first")
				break
			}
			if ss.reply("354 End data with <CR><LF>.<CR><LF>") != nil {
				return
			}
			var data strings.Builder
			for {
				l, err := s.readLine(ss)
				if err != nil {
					return
				}
				if l == "." {
					break
				}
				l = strings.TrimPrefix(l, ".") // dot-unstuffing (RFC 5321 4.5.2)
				data.WriteString(l + "\r\n")
			}
			s.mu.Lock()
			s.envelopes = append(s.envelopes, envelope{
				from: ss.from, rcpts: ss.rcpts, data: data.String(), tls: ss.tls, authUser: ss.authUser,
			})
			s.mu.Unlock()
			ss.from, ss.hasFrom, ss.rcpts = "", false, nil
			werr = ss.reply("250 2.0.0 queued")

		case "RSET":
			ss.from, ss.hasFrom, ss.rcpts = "", false, nil
			werr = ss.reply("250 2.0.0 OK")
		case "NOOP":
			werr = ss.reply("250 2.0.0 OK")
		case "QUIT":
			_ = ss.reply("221 2.0.0 bye")
			return
		default:
			werr = ss.reply("500 5.5.2 command not recognised")
		}
		if werr != nil {
			return
		}
	}
}

// auth handles "AUTH PLAIN [initial-response]".
func (s *testSMTPServer) auth(ss *smtpSession, arg string) error {
	if !s.opts.authPlain {
		return ss.reply("502 5.5.1 AUTH not available")
	}
	if ss.authUser != "" {
		return ss.reply("503 5.5.1 already authenticated")
	}
	mech, initial, _ := strings.Cut(arg, " ")
	if !strings.EqualFold(mech, "PLAIN") {
		return ss.reply("504 5.5.4 mechanism not supported")
	}
	if initial == "" {
		if err := ss.reply("334 "); err != nil {
			return err
		}
		l, err := s.readLine(ss)
		if err != nil {
			return err
		}
		if l == "*" {
			return ss.reply("501 5.0.0 AUTH cancelled")
		}
		initial = l
	}
	raw, err := base64.StdEncoding.DecodeString(initial)
	if err != nil {
		return ss.reply("501 5.5.2 cannot decode response")
	}
	parts := strings.Split(string(raw), "\x00")
	if len(parts) != 3 {
		return ss.reply("501 5.5.2 malformed PLAIN response")
	}
	if parts[1] != s.opts.user || parts[2] != s.opts.pass || s.opts.user == "" {
		return ss.reply("535 5.7.8 Authentication credentials invalid")
	}
	ss.authUser = parts[1]
	return ss.reply("235 2.7.0 Authentication successful")
}

// pathArg parses `FROM:<addr> [params]` (prefix "FROM:") or `TO:<addr> …`.
func pathArg(arg, prefix string) (string, bool) {
	if len(arg) < len(prefix) || !strings.EqualFold(arg[:len(prefix)], prefix) {
		return "", false
	}
	rest := strings.TrimLeft(arg[len(prefix):], " ")
	if !strings.HasPrefix(rest, "<") {
		return "", false
	}
	end := strings.IndexByte(rest, '>')
	if end < 0 {
		return "", false
	}
	return rest[1:end], true
}

// ---------------------------------------------------------------------------
// Tests

const (
	testSMTPUser = "otp-sender"
	testSMTPPass = "correct horse battery staple"
)

func testMessage() Message {
	return Message{
		From:    "PayWallet <no-reply@paywallet.test>",
		To:      "Alice Example <alice@example.test>",
		Subject: "Your PayWallet sign-in code: 123456",
		// A line starting with ".", a line that is only ".", and LF endings
		// that must go out as CRLF.
		Text: "Your code is 123456.\n.hidden line starting with a dot\n.\n..two dots\nlast line",
	}
}

const testMessageBody = "Your code is 123456.\r\n.hidden line starting with a dot\r\n.\r\n..two dots\r\nlast line\r\n"

var messageIDPattern = regexp.MustCompile(`^<[0-9a-f]{24}@127\.0\.0\.1>$`)

// checkDelivered verifies the message as the server stored it.
func checkDelivered(t *testing.T, env envelope, m Message, sent time.Time) {
	t.Helper()
	if env.from != addrSpec(m.From) {
		t.Errorf("MAIL FROM = %q, want %q", env.from, addrSpec(m.From))
	}
	if want := []string{addrSpec(m.To)}; !slices.Equal(env.rcpts, want) {
		t.Errorf("RCPT TO = %q, want %q", env.rcpts, want)
	}
	if i := strings.Index(strings.ReplaceAll(env.data, "\r\n", ""), "\n"); i >= 0 {
		t.Errorf("message contains a bare LF: %q", env.data)
	}
	msg, err := netmail.ReadMessage(strings.NewReader(env.data))
	if err != nil {
		t.Fatalf("parse received message: %v\n%s", err, env.data)
	}
	h := msg.Header
	for name, want := range map[string]string{
		"From":                      m.From,
		"To":                        m.To,
		"Subject":                   m.Subject,
		"Mime-Version":              "1.0",
		"Content-Type":              "text/plain; charset=utf-8",
		"Content-Transfer-Encoding": "8bit",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	date, err := h.Date()
	if err != nil {
		t.Errorf("Date header %q: %v", h.Get("Date"), err)
	} else if d := date.Sub(sent); d < -2*time.Second || d > 10*time.Second {
		t.Errorf("Date header %v is not near the send time %v", date, sent)
	}
	if id := h.Get("Message-Id"); !messageIDPattern.MatchString(id) {
		t.Errorf("Message-ID = %q, want <24 hex digits@127.0.0.1>", id)
	}
	body, err := io.ReadAll(msg.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	if string(body) != testMessageBody {
		t.Errorf("body = %q, want %q", body, testMessageBody)
	}
}

func TestSMTPSend(t *testing.T) {
	_, roots := testPKI(t)

	tests := []struct {
		name    string
		server  smtpOptions
		client  func(s *SMTP)                 // adjusts the sender; nil for defaults
		message func(m *Message)              // adjusts the message; nil for testMessage
		wantErr func(t *testing.T, err error) // nil: Send must succeed

		wantTLS     bool
		wantUser    string
		wantConns   int      // connections the server accepted
		forbidVerbs []string // commands the client must not have sent
	}{
		{
			name:      "plain delivery to loopback without auth",
			server:    smtpOptions{},
			wantConns: 1,
		},
		{
			name:        "STARTTLS offered: message arrives over TLS",
			server:      smtpOptions{startTLS: true},
			wantTLS:     true,
			wantConns:   1,
			forbidVerbs: []string{"AUTH"},
		},
		{
			name:      "AUTH PLAIN over STARTTLS with correct credentials",
			server:    smtpOptions{startTLS: true, authPlain: true, user: testSMTPUser, pass: testSMTPPass, requireAuth: true},
			client:    func(s *SMTP) { s.Username, s.Password = testSMTPUser, testSMTPPass },
			wantTLS:   true,
			wantUser:  testSMTPUser,
			wantConns: 1,
		},
		{
			name:    "AUTH PLAIN with a wrong password",
			server:  smtpOptions{startTLS: true, authPlain: true, user: testSMTPUser, pass: testSMTPPass, requireAuth: true},
			client:  func(s *SMTP) { s.Username, s.Password = testSMTPUser, "wrong" },
			wantErr: wantSMTPCode(535),
			// The exchange stops at AUTH: no envelope is opened.
			wantConns:   1,
			forbidVerbs: []string{"MAIL", "RCPT", "DATA"},
		},
		{
			name:   "implicit TLS",
			server: smtpOptions{implicitTLS: true, authPlain: true, user: testSMTPUser, pass: testSMTPPass},
			client: func(s *SMTP) {
				s.TLS = TLSImplicit
				s.Username, s.Password = testSMTPUser, testSMTPPass
			},
			wantTLS:     true,
			wantUser:    testSMTPUser,
			wantConns:   1,
			forbidVerbs: []string{"STARTTLS"},
		},
		{
			name:        "TLS none ignores an offered STARTTLS",
			server:      smtpOptions{startTLS: true},
			client:      func(s *SMTP) { s.TLS = TLSNone },
			wantTLS:     false,
			wantConns:   1,
			forbidVerbs: []string{"STARTTLS"},
		},
		{
			name:   "STARTTLS with an untrusted certificate fails before credentials are sent",
			server: smtpOptions{startTLS: true, authPlain: true, user: testSMTPUser, pass: testSMTPPass},
			client: func(s *SMTP) {
				s.TLSConfig = &tls.Config{RootCAs: x509.NewCertPool()} // trusts nothing
				s.Username, s.Password = testSMTPUser, testSMTPPass
			},
			wantErr: func(t *testing.T, err error) {
				var uerr x509.UnknownAuthorityError
				if !errors.As(err, &uerr) {
					t.Errorf("err = %v, want an x509.UnknownAuthorityError", err)
				}
			},
			wantConns:   1,
			forbidVerbs: []string{"AUTH", "MAIL", "DATA"},
		},
		{
			name:      "header injection in Subject",
			server:    smtpOptions{},
			message:   func(m *Message) { m.Subject = "Your code\r\nBcc: victim@example.test" },
			wantErr:   wantErrIs(ErrInvalidMessage),
			wantConns: 0,
		},
		{
			name:      "header injection in To",
			server:    smtpOptions{},
			message:   func(m *Message) { m.To = "alice@example.test\r\nBcc: victim@example.test" },
			wantErr:   wantErrIs(ErrInvalidMessage),
			wantConns: 0,
		},
		{
			name:      "bare LF in From",
			server:    smtpOptions{},
			message:   func(m *Message) { m.From = "no-reply@paywallet.test\nX-Evil: 1" },
			wantErr:   wantErrIs(ErrInvalidMessage),
			wantConns: 0,
		},
		{
			name:      "empty To",
			server:    smtpOptions{},
			message:   func(m *Message) { m.To = "" },
			wantErr:   wantErrIs(ErrInvalidMessage),
			wantConns: 0,
		},
		{
			name:        "server rejects RCPT with 550",
			server:      smtpOptions{rejectRcpt: true},
			wantErr:     wantSMTPCode(550),
			wantConns:   1,
			forbidVerbs: []string{"DATA"},
		},
	}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTestSMTPServer(t, tc.server)
			s := &SMTP{Addr: srv.addr, Timeout: 5 * time.Second, TLSConfig: &tls.Config{RootCAs: roots}}
			if tc.client != nil {
				tc.client(s)
			}
			m := testMessage()
			if tc.message != nil {
				tc.message(&m)
			}

			sent := time.Now()
			err := s.Send(t.Context(), m)

			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Send: %v", err)
				}
				envs := srv.Envelopes()
				if len(envs) != 1 {
					t.Fatalf("server stored %d messages, want 1", len(envs))
				}
				env := envs[0]
				if env.tls != tc.wantTLS {
					t.Errorf("message received over TLS = %v, want %v", env.tls, tc.wantTLS)
				}
				if env.authUser != tc.wantUser {
					t.Errorf("authenticated user = %q, want %q", env.authUser, tc.wantUser)
				}
				checkDelivered(t, env, m, sent)
				if cmds := srv.Commands(); len(cmds) == 0 || cmds[len(cmds)-1] != "QUIT" {
					t.Errorf("commands = %q, want the exchange to end with QUIT", cmds)
				}
			} else {
				if err == nil {
					t.Fatal("Send succeeded, want an error")
				}
				tc.wantErr(t, err)
				if n := len(srv.Envelopes()); n != 0 {
					t.Errorf("server stored %d messages, want none", n)
				}
			}
			if got := srv.Conns(); got != tc.wantConns {
				t.Errorf("server accepted %d connections, want %d", got, tc.wantConns)
			}
			cmds := srv.Commands()
			for _, verb := range tc.forbidVerbs {
				if slices.Contains(cmds, verb) {
					t.Errorf("client sent %s; commands were %q", verb, cmds)
				}
			}
		})
	}
}

func wantErrIs(target error) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, target) {
			t.Errorf("err = %v, want errors.Is(err, %v)", err, target)
		}
	}
}

func wantSMTPCode(code int) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var perr *textproto.Error
		if !errors.As(err, &perr) {
			t.Errorf("err = %v (%T), want a *textproto.Error with code %d", err, err, code)
			return
		}
		if perr.Code != code {
			t.Errorf("SMTP reply code = %d, want %d (err %v)", perr.Code, code, err)
		}
	}
}

func TestSMTPSendUnreachable(t *testing.T) {
	// A port that was just listening and is now closed refuses connections.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	const timeout = 2 * time.Second
	s := &SMTP{Addr: addr, Timeout: timeout}
	start := time.Now()
	err = s.Send(t.Context(), testMessage())
	elapsed := time.Since(start)
	if err == nil {
		t.Fatal("Send to a closed port succeeded")
	}
	if !strings.Contains(err.Error(), addr) {
		t.Errorf("err = %v, want it to name the address %s", err, addr)
	}
	if elapsed > timeout+time.Second {
		t.Errorf("Send took %v, want at most the %v timeout", elapsed, timeout)
	}
}

// silentServer accepts connections and never writes to them. It hangs up
// after silentHangUp so that a client without a deadline makes the test
// fail instead of hang.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				select {
				case <-done:
				case <-time.After(silentHangUp):
				}
			})
		}
	})
	t.Cleanup(func() {
		close(done)
		ln.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}

const silentHangUp = 5 * time.Second

func TestSMTPSendSilentServerTimesOut(t *testing.T) {
	// The server accepts the connection but never sends its greeting.
	addr := silentServer(t)

	const timeout = 300 * time.Millisecond
	s := &SMTP{Addr: addr, Timeout: timeout}
	start := time.Now()
	err := s.Send(t.Context(), testMessage())
	elapsed := time.Since(start)
	if err == nil {
		t.Fatal("Send to a silent server succeeded")
	}
	var nerr net.Error
	if !errors.As(err, &nerr) || !nerr.Timeout() {
		t.Errorf("err = %v, want a timeout", err)
	}
	if elapsed > timeout+2*time.Second {
		t.Errorf("Send took %v with a %v timeout", elapsed, timeout)
	}
}

func TestSMTPSendContextDeadline(t *testing.T) {
	// A deadline on the caller's context shorter than Timeout wins.
	addr := silentServer(t)

	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	s := &SMTP{Addr: addr, Timeout: time.Minute}
	start := time.Now()
	if err := s.Send(ctx, testMessage()); err == nil {
		t.Fatal("Send to a silent server succeeded")
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("Send took %v; the context deadline was 300ms", elapsed)
	}
}

func TestSMTPSendBadAddress(t *testing.T) {
	s := &SMTP{Addr: "no-port-here"}
	err := s.Send(t.Context(), testMessage())
	if err == nil || !strings.Contains(err.Error(), "bad SMTP address") {
		t.Errorf("err = %v, want a bad-address error", err)
	}
}

func TestAddrSpec(t *testing.T) {
	for in, want := range map[string]string{
		"alice@example.test":              "alice@example.test",
		"Alice <alice@example.test>":      "alice@example.test",
		`"Doe, <J>" <j.doe@example.test>`: "j.doe@example.test",
		"<bare@example.test>":             "bare@example.test",
		"Broken <no-close@example.test":   "Broken <no-close@example.test",
		"":                                "",
	} {
		if got := addrSpec(in); got != want {
			t.Errorf("addrSpec(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost":         true,
		"127.0.0.1":         true,
		"127.1.2.3":         true,
		"::1":               true,
		"10.0.0.1":          false,
		"smtp.example.test": false,
		"":                  false,
	} {
		if got := isLoopback(host); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}
