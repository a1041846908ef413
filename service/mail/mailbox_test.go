package mail

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func mustSend(t *testing.T, b *Mailbox, to, subject, text string) {
	t.Helper()
	m := Message{From: "PayWallet <no-reply@paywallet.test>", To: to, Subject: subject, Text: text}
	if err := b.Send(t.Context(), m); err != nil {
		t.Fatalf("Send(%q, %q): %v", to, subject, err)
	}
}

func subjects(rs []Received) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Subject
	}
	return out
}

func TestMailboxLatest(t *testing.T) {
	b := &Mailbox{}
	before := time.Now().UTC()
	mustSend(t, b, "Alice <Alice@Example.test>", "first for alice", "code 111111")
	mustSend(t, b, "bob@example.test", "only for bob", "code 333333")
	mustSend(t, b, "alice@example.test", "second for alice", "code 222222")
	after := time.Now().UTC()

	got, ok := b.Latest("ALICE@example.TEST")
	if !ok {
		t.Fatal("Latest(alice) found nothing")
	}
	if got.Subject != "second for alice" || got.Code != "222222" {
		t.Errorf("Latest(alice) = %+v, want the second message with code 222222", got)
	}
	if got.ReceivedAt.Before(before) || got.ReceivedAt.After(after) {
		t.Errorf("ReceivedAt = %v, want between %v and %v", got.ReceivedAt, before, after)
	}
	if got.ReceivedAt.Location() != time.UTC {
		t.Errorf("ReceivedAt location = %v, want UTC", got.ReceivedAt.Location())
	}

	got, ok = b.Latest("bob@example.test")
	if !ok || got.Subject != "only for bob" || got.To != "bob@example.test" {
		t.Errorf("Latest(bob) = %+v, %v", got, ok)
	}

	// The display name is dropped; the address is stored as given.
	all := b.All()
	if all[len(all)-1].To != "Alice@Example.test" {
		t.Errorf("oldest message To = %q, want the bare address Alice@Example.test", all[len(all)-1].To)
	}

	for _, addr := range []string{"carol@example.test", "", "alice@example"} {
		if r, ok := b.Latest(addr); ok {
			t.Errorf("Latest(%q) = %+v, want not found", addr, r)
		}
	}
}

func TestMailboxCode(t *testing.T) {
	tests := []struct {
		name, subject, text, want string
	}{
		{"in subject", "Your sign-in code: 123456", "Use the code above.", "123456"},
		{"in body", "Your sign-in code", "Enter 654321 to sign in.\nIt expires in 10 minutes.", "654321"},
		{"body on a later line", "Sign in", "Hello,\n\n  987654\n", "987654"},
		{"subject before body", "Code 111111", "Code 222222", "111111"},
		{"none", "Welcome", "No code here.", ""},
		{"five digits", "Code 12345", "", ""},
		{"seven digits", "Code 1234567", "", ""},
		{"digits inside a word", "ref abc123456def", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &Mailbox{}
			mustSend(t, b, "alice@example.test", tc.subject, tc.text)
			r, ok := b.Latest("alice@example.test")
			if !ok {
				t.Fatal("message not stored")
			}
			if r.Code != tc.want {
				t.Errorf("Code = %q, want %q", r.Code, tc.want)
			}
			if r.Subject != tc.subject || r.Body != tc.text {
				t.Errorf("stored subject/body = %q/%q, want %q/%q", r.Subject, r.Body, tc.subject, tc.text)
			}
		})
	}
}

func TestMailboxLimit(t *testing.T) {
	b := &Mailbox{Limit: 3}
	for i := 1; i <= 5; i++ {
		mustSend(t, b, fmt.Sprintf("user%d@example.test", i), fmt.Sprintf("msg %d", i), "")
	}
	if got, want := subjects(b.All()), []string{"msg 5", "msg 4", "msg 3"}; !slices.Equal(got, want) {
		t.Errorf("All() = %q, want %q", got, want)
	}
	for _, gone := range []string{"user1@example.test", "user2@example.test"} {
		if _, ok := b.Latest(gone); ok {
			t.Errorf("Latest(%s) found a message that should have been dropped", gone)
		}
	}
	if _, ok := b.Latest("user3@example.test"); !ok {
		t.Error("Latest(user3) found nothing; it is within the limit")
	}
}

func TestMailboxDefaultLimit(t *testing.T) {
	b := &Mailbox{}
	for i := range 205 {
		mustSend(t, b, "alice@example.test", fmt.Sprintf("msg %d", i), "")
	}
	all := b.All()
	if len(all) != 200 {
		t.Fatalf("len(All()) = %d, want the default limit 200", len(all))
	}
	if all[0].Subject != "msg 204" || all[199].Subject != "msg 5" {
		t.Errorf("All() spans %q..%q, want msg 204..msg 5", all[0].Subject, all[199].Subject)
	}
}

func TestMailboxAllNewestFirst(t *testing.T) {
	b := &Mailbox{}
	if all := b.All(); len(all) != 0 {
		t.Fatalf("empty mailbox All() = %v", all)
	}
	for _, s := range []string{"a", "b", "c"} {
		mustSend(t, b, "alice@example.test", s, "")
	}
	all := b.All()
	if got, want := subjects(all), []string{"c", "b", "a"}; !slices.Equal(got, want) {
		t.Fatalf("All() = %q, want %q", got, want)
	}
	// The result is a copy: changing it does not change the mailbox.
	all[0].Subject = "changed"
	if got := b.All()[0].Subject; got != "c" {
		t.Errorf("after modifying the returned slice, All()[0].Subject = %q", got)
	}
}

func TestMailboxRejectsInvalidMessage(t *testing.T) {
	valid := Message{From: "no-reply@paywallet.test", To: "alice@example.test", Subject: "code 123456", Text: "hi"}
	tests := []struct {
		name   string
		modify func(*Message)
	}{
		{"CRLF in Subject", func(m *Message) { m.Subject = "code\r\nBcc: victim@example.test" }},
		{"LF in To", func(m *Message) { m.To = "alice@example.test\nBcc: victim@example.test" }},
		{"CR in From", func(m *Message) { m.From = "no-reply@paywallet.test\rX: y" }},
		{"empty From", func(m *Message) { m.From = "" }},
		{"empty To", func(m *Message) { m.To = "" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &Mailbox{}
			m := valid
			tc.modify(&m)
			if err := b.Send(t.Context(), m); !errors.Is(err, ErrInvalidMessage) {
				t.Errorf("Send = %v, want ErrInvalidMessage", err)
			}
			if n := len(b.All()); n != 0 {
				t.Errorf("mailbox holds %d messages after a refused Send", n)
			}
		})
	}
	// Line breaks in the body are fine.
	b := &Mailbox{}
	m := valid
	m.Text = "line 1\r\nline 2\n"
	if err := b.Send(t.Context(), m); err != nil {
		t.Errorf("Send with a multi-line body: %v", err)
	}
}

func TestMailboxLogs(t *testing.T) {
	var buf bytes.Buffer
	b := &Mailbox{
		Logger: slog.New(slog.NewTextHandler(&buf, nil)),
		URL:    "http://127.0.0.1:8080/dev/mailbox",
	}
	mustSend(t, b, "alice@example.test", "code 123456", "")
	out := buf.String()
	for _, want := range []string{"alice@example.test", "http://127.0.0.1:8080/dev/mailbox"} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q does not mention %q", out, want)
		}
	}
}

// ---------------------------------------------------------------------------
// HTTP

// localRequest is a request from a client on this machine to localhost, the
// only kind the handler answers (httptest.NewRequest's are from 192.0.2.1 to
// example.com).
func localRequest(t *testing.T, method, target string) *http.Request {
	req := httptest.NewRequestWithContext(t.Context(), method, target, nil)
	req.Host = "localhost:8080"
	req.RemoteAddr = "127.0.0.1:50000"
	return req
}

func serve(t *testing.T, h http.Handler, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	req := localRequest(t, method, target)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("%s %s: Cache-Control = %q, want no-store", method, target, cc)
	}
	return rec
}

// decodeJSON checks the content type and decodes the body into a generic map.
func decodeJSON(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var v map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode JSON %q: %v", rec.Body.String(), err)
	}
	return v
}

func TestMailboxHandlerPage(t *testing.T) {
	b := &Mailbox{}
	h := b.Handler()

	t.Run("empty", func(t *testing.T) {
		rec := serve(t, h, http.MethodGet, "/")
		if rec.Code != http.StatusOK {
			t.Fatalf("status = %d", rec.Code)
		}
		if !strings.Contains(rec.Body.String(), "No messages yet.") {
			t.Errorf("empty page does not say so:\n%s", rec.Body)
		}
	})

	mustSend(t, b, "Alice <alice@example.test>", `<script>alert("x")</script> & your code 123456`,
		"Hello <b>Alice</b>,\nyour code is 123456.")
	mustSend(t, b, "bob@example.test", "for bob", "code 777777")

	for _, path := range []string{"/", ""} {
		t.Run(fmt.Sprintf("path %q", path), func(t *testing.T) {
			req := localRequest(t, http.MethodGet, "/")
			req.URL.Path = path // httptest.NewRequest refuses an empty path
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, body %q", rec.Code, rec.Body)
			}
			if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", cc)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("Content-Type = %q", ct)
			}
			if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
				t.Errorf("Content-Security-Policy = %q", csp)
			}
			page := rec.Body.String()
			for _, want := range []string{
				"alice@example.test",
				`<div class="code">123456</div>`,
				"&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; your code 123456",
				"Hello &lt;b&gt;Alice&lt;/b&gt;,\nyour code is 123456.",
				"bob@example.test",
				`<div class="code">777777</div>`,
			} {
				if !strings.Contains(page, want) {
					t.Errorf("page does not contain %q", want)
				}
			}
			for _, bad := range []string{"<script>", "<b>Alice"} {
				if strings.Contains(page, bad) {
					t.Errorf("page contains unescaped %q", bad)
				}
			}
			// Newest first.
			if strings.Index(page, "bob@example.test") > strings.Index(page, "alice@example.test") {
				t.Error("page lists the older message first")
			}
		})
	}
}

func TestMailboxHandlerLatest(t *testing.T) {
	b := &Mailbox{}
	h := b.Handler()
	mustSend(t, b, "alice@example.test", "old", "code 111111")
	mustSend(t, b, "Alice <Alice@Example.test>", "Your code", "Enter 123456 to sign in.")

	t.Run("found", func(t *testing.T) {
		rec := serve(t, h, http.MethodGet, "/latest?address=ALICE%40example.test")
		if rec.Code != http.StatusOK {
			t.Fatalf("status = %d, body %q", rec.Code, rec.Body)
		}
		v := decodeJSON(t, rec)
		want := map[string]string{
			"to":      "Alice@Example.test",
			"subject": "Your code",
			"body":    "Enter 123456 to sign in.",
			"code":    "123456",
		}
		for k, w := range want {
			if got, _ := v[k].(string); got != w {
				t.Errorf("%s = %#v, want %q", k, v[k], w)
			}
		}
		ra, _ := v["receivedAt"].(string)
		at, err := time.Parse(time.RFC3339Nano, ra)
		if err != nil {
			t.Errorf("receivedAt = %#v: %v", v["receivedAt"], err)
		} else if d := time.Since(at); d < 0 || d > time.Minute {
			t.Errorf("receivedAt = %v, want a moment ago", at)
		}
		if len(v) != 5 {
			t.Errorf("JSON has keys %v, want exactly to/subject/body/code/receivedAt", v)
		}
	})

	t.Run("no code omits the field", func(t *testing.T) {
		mustSend(t, b, "carol@example.test", "Welcome", "no code")
		rec := serve(t, h, http.MethodGet, "/latest?address=carol@example.test")
		v := decodeJSON(t, rec)
		if _, ok := v["code"]; ok {
			t.Errorf("JSON %v has a code field", v)
		}
	})

	t.Run("unknown address", func(t *testing.T) {
		rec := serve(t, h, http.MethodGet, "/latest?address=nobody@example.test")
		if rec.Code != http.StatusNotFound {
			t.Fatalf("status = %d, want 404", rec.Code)
		}
		v := decodeJSON(t, rec)
		if v["code"] != "NOT_FOUND" || v["status"] != float64(404) {
			t.Errorf("body = %v, want status 404 and code NOT_FOUND", v)
		}
	})

	for _, target := range []string{"/latest", "/latest?address=", "/latest?addr=alice@example.test"} {
		t.Run("missing address "+target, func(t *testing.T) {
			rec := serve(t, h, http.MethodGet, target)
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400", rec.Code)
			}
			var body struct {
				Status  int    `json:"status"`
				Code    string `json:"code"`
				Details struct {
					Errors []struct {
						Field string `json:"field"`
					} `json:"errors"`
				} `json:"details"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("decode %q: %v", rec.Body, err)
			}
			if body.Status != 400 || body.Code != "INVALID_INPUT" {
				t.Errorf("body = %+v, want status 400 and code INVALID_INPUT", body)
			}
			if len(body.Details.Errors) == 0 || body.Details.Errors[0].Field != "address" {
				t.Errorf("details.errors = %+v, want errors[0].field == address", body.Details.Errors)
			}
		})
	}

	t.Run("unknown path", func(t *testing.T) {
		rec := serve(t, h, http.MethodGet, "/nope")
		if rec.Code != http.StatusNotFound {
			t.Fatalf("status = %d, want 404", rec.Code)
		}
		if v := decodeJSON(t, rec); v["code"] != "NOT_FOUND" {
			t.Errorf("body = %v", v)
		}
	})

	t.Run("HEAD is allowed", func(t *testing.T) {
		rec := serve(t, h, http.MethodHead, "/latest?address=alice@example.test")
		if rec.Code != http.StatusOK {
			t.Errorf("status = %d, want 200", rec.Code)
		}
	})
}

func TestMailboxHandlerMethodNotAllowed(t *testing.T) {
	b := &Mailbox{}
	mustSend(t, b, "alice@example.test", "code 123456", "")
	h := b.Handler()
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		for _, target := range []string{"/", "/latest?address=alice@example.test"} {
			t.Run(method+" "+target, func(t *testing.T) {
				rec := serve(t, h, method, target)
				if rec.Code != http.StatusMethodNotAllowed {
					t.Fatalf("status = %d, want 405", rec.Code)
				}
				if allow := rec.Header().Get("Allow"); allow != "GET, HEAD" {
					t.Errorf("Allow = %q, want %q", allow, "GET, HEAD")
				}
				if v := decodeJSON(t, rec); v["code"] != "METHOD_NOT_ALLOWED" {
					t.Errorf("body = %v", v)
				}
			})
		}
	}
}

func TestMailboxHandlerMounted(t *testing.T) {
	b := &Mailbox{}
	mustSend(t, b, "alice@example.test", "Your code", "Enter 123456")
	srv := httptest.NewServer(http.StripPrefix("/dev/mailbox", b.Handler()))
	defer srv.Close()

	client := srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	get := func(path string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(body)
	}

	for _, path := range []string{"/dev/mailbox", "/dev/mailbox/"} {
		resp, body := get(path)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: status %d", path, resp.StatusCode)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("GET %s: Content-Type %q", path, ct)
		}
		if resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: Cache-Control %q", path, resp.Header.Get("Cache-Control"))
		}
		if !strings.Contains(body, "Dev mailbox") || !strings.Contains(body, "123456") {
			t.Errorf("GET %s: not the mailbox page:\n%s", path, body)
		}
	}

	resp, body := get("/dev/mailbox/latest?address=alice@example.test")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"code":"123456"`) {
		t.Errorf("GET /dev/mailbox/latest: %d %s", resp.StatusCode, body)
	}
}

func TestMailboxConcurrentSend(t *testing.T) {
	const n = 50
	b := &Mailbox{Limit: 1000}
	h := b.Handler()

	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			m := Message{
				From:    "no-reply@paywallet.test",
				To:      fmt.Sprintf("user%02d@example.test", i),
				Subject: fmt.Sprintf("msg %02d", i),
				Text:    fmt.Sprintf("your code is %06d", 100000+i),
			}
			errs <- b.Send(t.Context(), m)
		})
		// Readers run alongside the writers.
		wg.Go(func() {
			b.Latest(fmt.Sprintf("user%02d@example.test", i))
			b.All()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, localRequest(t, http.MethodGet, "/"))
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Send: %v", err)
		}
	}

	all := b.All()
	if len(all) != n {
		t.Fatalf("mailbox holds %d messages, want %d", len(all), n)
	}
	seen := map[string]bool{}
	for _, r := range all {
		seen[r.Subject] = true
	}
	for i := range n {
		subject := fmt.Sprintf("msg %02d", i)
		if !seen[subject] {
			t.Errorf("message %q was lost", subject)
		}
		r, ok := b.Latest(fmt.Sprintf("user%02d@example.test", i))
		if !ok || r.Code != fmt.Sprintf("%06d", 100000+i) {
			t.Errorf("Latest(user%02d) = %+v, %v", i, r, ok)
		}
	}
}

// TestMailboxLoopbackOnly: the mailbox shows every code, so it answers only
// a loopback client that names a loopback host. A web page can point its own
// domain at 127.0.0.1 (DNS rebinding) and read the page as "same origin";
// its requests carry that domain in Host and get 421. A client on another
// machine gets 403, also when a proxy on this machine forwarded it.
func TestMailboxLoopbackOnly(t *testing.T) {
	b := &Mailbox{}
	mustSend(t, b, "alice@example.test", "Your code", "Enter 123456")
	srv := httptest.NewServer(http.StripPrefix("/dev/mailbox", b.Handler()))
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]

	get := func(host, path string, hdr map[string]string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, path := range []string{"/dev/mailbox", "/dev/mailbox/", "/dev/mailbox/latest?address=alice@example.test"} {
		for _, host := range []string{"evil.example", "evil.example:" + port, "localhost.evil.example:" + port, "127.0.0.1.nip.io", "0.0.0.0:" + port} {
			if s := get(host, path, nil); s != http.StatusMisdirectedRequest {
				t.Errorf("GET %s with Host %s: %d, want 421", path, host, s)
			}
		}
		for _, host := range []string{"localhost", "localhost:" + port, "LocalHost:8080", "127.0.0.1:" + port, "127.0.0.1", "[::1]:" + port, "[::1]"} {
			if s := get(host, path, nil); s != http.StatusOK {
				t.Errorf("GET %s with Host %s: %d, want 200", path, host, s)
			}
		}
		// Forwarded by a proxy on this machine for a client elsewhere.
		for _, hdr := range []map[string]string{
			{"X-Forwarded-For": "203.0.113.9"},
			{"X-Forwarded-For": "127.0.0.1, 203.0.113.9"},
			{"Forwarded": "for=203.0.113.9"},
			{"X-Real-Ip": "203.0.113.9"},
		} {
			if s := get("localhost:"+port, path, hdr); s != http.StatusForbidden {
				t.Errorf("GET %s forwarded with %v: %d, want 403", path, hdr, s)
			}
		}
		if s := get("localhost:"+port, path, map[string]string{"X-Forwarded-For": "127.0.0.1"}); s != http.StatusOK {
			t.Errorf("GET %s forwarded for loopback: %d, want 200", path, s)
		}
	}

	// A client on another machine.
	for _, remote := range []string{"192.0.2.1:1234", "[2001:db8::1]:1234", "0.0.0.0:0", "garbage"} {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/latest?address=alice@example.test", nil)
		req.Host = "localhost:8080"
		req.RemoteAddr = remote
		rec := httptest.NewRecorder()
		b.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusForbidden || strings.Contains(rec.Body.String(), "123456") {
			t.Errorf("client %s: %d %s, want 403 without the code", remote, rec.Code, rec.Body)
		}
	}
}

// TestMailboxPageAccessible: the page carries no inline style (its
// stylesheet is a file of its own, which the CSP allows without
// 'unsafe-inline'), and it does not reload itself (WCAG 2.2.1): a visible
// Refresh link reloads it when the reader wants. Mounted with or without a
// trailing slash, the stylesheet and the link resolve to the mailbox.
func TestMailboxPageAccessible(t *testing.T) {
	b := &Mailbox{}
	mustSend(t, b, "alice@example.test", "Your code", "Enter 123456")
	srv := httptest.NewServer(http.StripPrefix("/dev/mailbox", b.Handler()))
	defer srv.Close()
	get := func(u string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	attr := regexp.MustCompile(`<(link|a)\b[^>]*\b(?:href)="([^"]*)"[^>]*>([^<]*)`)
	for _, page := range []string{"/dev/mailbox", "/dev/mailbox/"} {
		resp, body := get(srv.URL + page)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", page, resp.StatusCode)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "style-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q", page, csp)
		}
		lower := strings.ToLower(body)
		for _, bad := range []string{"<style", " style=", "http-equiv", "refresh\" content", "<script"} {
			if strings.Contains(lower, bad) {
				t.Errorf("GET %s: the page contains %q:\n%s", page, bad, body)
			}
		}
		base, _ := url.Parse(srv.URL + page)
		var stylesheet, refresh string
		for _, m := range attr.FindAllStringSubmatch(body, -1) {
			switch {
			case m[1] == "link" && strings.Contains(m[0], `rel="stylesheet"`):
				stylesheet = m[2]
			case m[1] == "a" && strings.TrimSpace(m[3]) == "Refresh":
				refresh = m[2]
			}
		}
		if stylesheet == "" || refresh == "" {
			t.Fatalf("GET %s: stylesheet %q, Refresh link %q:\n%s", page, stylesheet, refresh, body)
		}
		css, _ := base.Parse(stylesheet)
		resp, body = get(css.String())
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/css; charset=utf-8" ||
			resp.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(body, ".code") {
			t.Errorf("GET %s (stylesheet of %s): %d %v\n%s", css.Path, page, resp.StatusCode, resp.Header, body)
		}
		again, _ := base.Parse(refresh)
		if resp, body = get(again.String()); resp.StatusCode != http.StatusOK || !strings.Contains(body, "123456") {
			t.Errorf("GET %s (Refresh of %s): %d", again.Path, page, resp.StatusCode)
		}
	}
}
