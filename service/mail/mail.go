// Package mail delivers the service's e-mail (one-time sign-in codes).
//
// Two senders exist:
//
//   - [SMTP] speaks the real protocol to a mail server (STARTTLS when the
//     server offers it, implicit TLS on request, AUTH PLAIN when credentials
//     are configured). This is what production uses.
//   - [Mailbox] keeps messages in memory for development. It is off unless
//     the operator enables it, and its [Mailbox.Handler] serves a page and a
//     JSON endpoint so a person (or a test) can read the code.
package mail

import (
	"context"
	"errors"
	"mime"
	"strings"
	"time"
)

// Message is one plain-text e-mail.
type Message struct {
	From    string
	To      string
	Subject string
	Text    string
}

// Sender delivers messages.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// ErrInvalidMessage reports a message that cannot be sent as given, such as
// one whose header fields contain line breaks.
var ErrInvalidMessage = errors.New("mail: invalid message")

// validate refuses header values that would let a value inject headers.
func (m Message) validate() error {
	for _, v := range []string{m.From, m.To, m.Subject} {
		if strings.ContainsAny(v, "\r\n") {
			return ErrInvalidMessage
		}
	}
	if m.From == "" || m.To == "" {
		return ErrInvalidMessage
	}
	return nil
}

// rfc5322 renders the message with the headers every mail server expects.
func (m Message) rfc5322(now time.Time, messageID string) []byte {
	var b strings.Builder
	b.WriteString("From: " + m.From + "\r\n")
	b.WriteString("To: " + m.To + "\r\n")
	b.WriteString("Subject: " + mime.QEncoding.Encode("utf-8", m.Subject) + "\r\n")
	b.WriteString("Date: " + now.Format(time.RFC1123Z) + "\r\n")
	b.WriteString("Message-ID: <" + messageID + ">\r\n")
	b.WriteString("MIME-Version: 1.0\r\n")
	b.WriteString("Content-Type: text/plain; charset=utf-8\r\n")
	b.WriteString("Content-Transfer-Encoding: 8bit\r\n")
	b.WriteString("\r\n")
	// Normalise line endings to CRLF; the SMTP client dot-stuffs the body.
	text := strings.ReplaceAll(m.Text, "\r\n", "\n")
	b.WriteString(strings.ReplaceAll(text, "\n", "\r\n"))
	if !strings.HasSuffix(text, "\n") {
		b.WriteString("\r\n")
	}
	return []byte(b.String())
}
