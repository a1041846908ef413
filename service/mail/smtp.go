package mail

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/smtp"
	"strings"
	"time"
)

// TLS modes of an SMTP connection.
const (
	// TLSStartTLS upgrades the connection when the server offers STARTTLS
	// and refuses to send credentials over a connection that stayed plain
	// (except to a loopback server).
	TLSStartTLS = "starttls"
	// TLSImplicit connects with TLS from the first byte (port 465).
	TLSImplicit = "tls"
	// TLSNone never upgrades. Credentials are then only sent to loopback.
	TLSNone = "none"
)

// SMTP sends messages through an SMTP server.
type SMTP struct {
	Addr     string // host:port
	Username string // optional; AUTH PLAIN when set
	Password string
	TLS      string        // TLSStartTLS (default), TLSImplicit or TLSNone
	Timeout  time.Duration // whole-exchange deadline; 30 s when zero
	// TLSConfig overrides the TLS client settings (tests use it to trust a
	// throwaway certificate). ServerName defaults to the host of Addr.
	TLSConfig *tls.Config
}

// Send delivers m. It opens one connection per message: OTP mail is rare and
// a pooled connection would only add failure modes.
func (s *SMTP) Send(ctx context.Context, m Message) (err error) {
	if err := m.validate(); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(s.Addr)
	if err != nil {
		return fmt.Errorf("mail: bad SMTP address %q: %w", s.Addr, err)
	}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer func() {
		// When the deadline or a cancellation ended the exchange, say so:
		// the I/O error alone ("use of closed network connection") hides why.
		if err != nil && ctx.Err() != nil {
			err = fmt.Errorf("mail: SMTP exchange with %s stopped: %w (%v)", s.Addr, ctx.Err(), err)
		}
	}()

	tlsConf := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if s.TLSConfig != nil {
		tlsConf = s.TLSConfig.Clone()
		if tlsConf.ServerName == "" {
			tlsConf.ServerName = host
		}
	}

	var d net.Dialer
	var conn net.Conn
	if s.TLS == TLSImplicit {
		conn, err = (&tls.Dialer{NetDialer: &d, Config: tlsConf}).DialContext(ctx, "tcp", s.Addr)
	} else {
		conn, err = d.DialContext(ctx, "tcp", s.Addr)
	}
	if err != nil {
		return fmt.Errorf("mail: connect to %s: %w", s.Addr, err)
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	// Cancelling ctx mid-exchange closes the connection, which fails the
	// pending read or write at once.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("mail: SMTP greeting from %s: %w", s.Addr, err)
	}
	defer c.Close()

	if err := c.Hello("localhost"); err != nil {
		return fmt.Errorf("mail: EHLO: %w", err)
	}
	secure := s.TLS == TLSImplicit
	if s.TLS == "" || s.TLS == TLSStartTLS {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(tlsConf); err != nil {
				return fmt.Errorf("mail: STARTTLS: %w", err)
			}
			secure = true
		}
	}
	if s.Username != "" {
		if !secure && !isLoopback(host) {
			return errors.New("mail: refusing to send SMTP credentials over a plain connection")
		}
		// smtp.PlainAuth itself refuses plain non-localhost connections;
		// the check above gives the operator a clearer message first.
		if err := c.Auth(smtp.PlainAuth("", s.Username, s.Password, host)); err != nil {
			return fmt.Errorf("mail: AUTH: %w", err)
		}
	}
	if err := c.Mail(addrSpec(m.From)); err != nil {
		return fmt.Errorf("mail: MAIL FROM: %w", err)
	}
	if err := c.Rcpt(addrSpec(m.To)); err != nil {
		return fmt.Errorf("mail: RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("mail: DATA: %w", err)
	}
	if _, err := w.Write(m.rfc5322(time.Now(), messageID(host))); err != nil {
		return fmt.Errorf("mail: write message: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("mail: end of data: %w", err)
	}
	return c.Quit()
}

// addrSpec extracts the bare address from "Name <addr>" forms.
func addrSpec(s string) string {
	if i := strings.LastIndexByte(s, '<'); i >= 0 {
		if j := strings.IndexByte(s[i:], '>'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return s
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func messageID(host string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:]) + "@" + host
}
