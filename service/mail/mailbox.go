package mail

import (
	"context"
	"encoding/json"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	"paywallet/internal/loopback"
	"paywallet/shared/wire"
)

// Mailbox is the development mail sink: it keeps the most recent messages in
// memory and serves them over HTTP. It exists so that `make run` works with no
// mail server and browser tests can read the code a person would read.
//
// Mount [Mailbox.Handler] at /dev/mailbox. Never enable it where real users
// sign in: anyone who can reach the page can read everyone's codes.
type Mailbox struct {
	Logger *slog.Logger // optional; each message is logged with the page address
	URL    string       // optional; where the page is reachable, for the log line
	Limit  int          // messages kept; 200 when zero

	mu   sync.Mutex
	msgs []Received
}

// Received is a message as the mailbox shows it.
type Received struct {
	To         string    `json:"to"`
	Subject    string    `json:"subject"`
	Body       string    `json:"body"`
	Code       string    `json:"code,omitempty"`
	ReceivedAt time.Time `json:"receivedAt"`
}

var codePattern = regexp.MustCompile(`\b[0-9]{6}\b`)

// Send stores m.
func (b *Mailbox) Send(_ context.Context, m Message) error {
	if err := m.validate(); err != nil {
		return err
	}
	r := Received{
		To:         addrSpec(m.To),
		Subject:    m.Subject,
		Body:       m.Text,
		Code:       codePattern.FindString(m.Subject + "\n" + m.Text),
		ReceivedAt: time.Now().UTC(),
	}
	limit := b.Limit
	if limit <= 0 {
		limit = 200
	}
	b.mu.Lock()
	b.msgs = append(b.msgs, r)
	if len(b.msgs) > limit {
		b.msgs = append([]Received(nil), b.msgs[len(b.msgs)-limit:]...)
	}
	b.mu.Unlock()
	if b.Logger != nil {
		where := b.URL
		if where == "" {
			where = "the dev mailbox"
		}
		b.Logger.Info("e-mail delivered to the dev mailbox", "to", r.To, "subject", r.Subject, "read it at", where)
	}
	return nil
}

// Latest returns the newest message to the address (compared case-insensitively).
func (b *Mailbox) Latest(address string) (Received, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := len(b.msgs) - 1; i >= 0; i-- {
		if strings.EqualFold(b.msgs[i].To, address) {
			return b.msgs[i], true
		}
	}
	return Received{}, false
}

// All returns the messages, newest first.
func (b *Mailbox) All() []Received {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Received, len(b.msgs))
	for i, m := range b.msgs {
		out[len(b.msgs)-1-i] = m
	}
	return out
}

// Handler serves, relative to where it is mounted:
//
//	GET /                       an HTML page listing messages, newest first
//	GET /latest?address=<addr>  the newest message to addr as JSON, or 404
//
// It answers only clients on this machine that address it by a loopback
// name (localhost, 127.0.0.1, [::1], any port): any other Host is refused
// with 421 (a web page whose domain resolves to 127.0.0.1 must not read the
// codes), any other client, or one a proxy forwarded from elsewhere, with 403.
//
// Mount it with http.StripPrefix("/dev/mailbox", …).
func (b *Mailbox) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		if status, reason := loopback.Check(r); status != 0 {
			code := "FORBIDDEN"
			if status == http.StatusMisdirectedRequest {
				code = "MISDIRECTED_REQUEST"
			}
			writeError(w, status, code, reason, nil)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "use GET", nil)
			return
		}
		switch r.URL.Path {
		case "", "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Security-Policy", mailboxCSP)
			_ = mailboxPage.Execute(w, newPageData(r, b.All()))
		case "/" + stylesheetName:
			w.Header().Set("Content-Type", "text/css; charset=utf-8")
			_, _ = io.WriteString(w, stylesheet)
		case "/latest":
			addr := r.URL.Query().Get("address")
			if addr == "" {
				writeError(w, http.StatusBadRequest, "INVALID_INPUT", "address is required",
					map[string]any{"errors": []map[string]string{{"field": "address", "message": "required"}}})
				return
			}
			m, ok := b.Latest(addr)
			if !ok {
				writeError(w, http.StatusNotFound, "NOT_FOUND", "no message for this address", nil)
				return
			}
			writeJSON(w, http.StatusOK, m)
		default:
			writeError(w, http.StatusNotFound, "NOT_FOUND", "no such page", nil)
		}
	})
}

// writeError answers with the API's error body; its requestId is the
// Request-Id the server that mounts the mailbox gave the answer (the
// BFF's, paymentsd's), for quoting it as with any other error.
func writeError(w http.ResponseWriter, status int, code, message string, details any) {
	body := map[string]any{"status": status, "code": code, "message": message}
	if details != nil {
		body["details"] = details
	}
	if id := w.Header().Get(wire.HeaderRequestID); id != "" {
		body["requestId"] = id
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// mailboxCSP lets the page load its own stylesheet and nothing else: no
// script, no inline style, no framing.
const mailboxCSP = "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// The page's stylesheet, served beside it.
const (
	stylesheetName = "mailbox.css"
	stylesheet     = `body{font:16px/1.5 system-ui,sans-serif;margin:0 auto;max-width:46rem;padding:1rem;color:#1b1f24}
h1{font-size:1.4rem}.note{color:#5b636e}
article{border:1px solid #d0d7de;border-radius:8px;padding:.75rem 1rem;margin:.75rem 0}
.code{font:600 1.6rem ui-monospace,monospace;letter-spacing:.15em}
pre{white-space:pre-wrap;margin:.5rem 0 0}
`
)

// pageData is what the page template shows: the messages, and the URLs of
// the stylesheet and of the page itself relative to the page.
type pageData struct {
	Messages         []Received
	Stylesheet, Self string
}

// newPageData works out the page's relative URLs. Served at the mount point
// with a trailing slash (/dev/mailbox/), the stylesheet is a sibling; served
// at the mount point itself (/dev/mailbox, an empty path here), relative
// URLs resolve against its parent, so they start with the mount point's last
// segment, taken from the request as the client sent it.
func newPageData(r *http.Request, msgs []Received) pageData {
	if r.URL.Path == "/" {
		return pageData{Messages: msgs, Stylesheet: stylesheetName, Self: "./"}
	}
	name := "mailbox"
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil {
		if base := path.Base(u.EscapedPath()); base != "/" && base != "." {
			name = base
		}
	}
	return pageData{Messages: msgs, Stylesheet: name + "/" + stylesheetName, Self: name}
}

// mailboxPage does not reload itself (WCAG 2.2.1 asks that a reader control
// such timing): the Refresh link fetches new messages.
var mailboxPage = template.Must(template.New("mailbox").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Dev mailbox</title>
<link rel="stylesheet" href="{{.Stylesheet}}">
</head><body>
<h1>Dev mailbox</h1>
<p class="note">Development only: every e-mail the service sends lands here instead of a mail server, newest first.</p>
<p><a href="{{.Self}}">Refresh</a> to see messages that arrived since this page was loaded.</p>
{{range .Messages}}<article>
<div><strong>To:</strong> {{.To}} · <time datetime="{{.ReceivedAt.Format "2006-01-02T15:04:05Z07:00"}}">{{.ReceivedAt.Format "15:04:05 UTC"}}</time></div>
<div><strong>Subject:</strong> {{.Subject}}</div>
{{if .Code}}<div class="code">{{.Code}}</div>{{end}}
<pre>{{.Body}}</pre>
</article>{{else}}<p>No messages yet.</p>{{end}}
</body></html>`))
