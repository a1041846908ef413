package bff

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"paywallet/shared/wire"
)

const (
	macChrome    = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	linuxFirefox = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
)

// loginWith signs in like h.login, from a browser that sends userAgent.
func (h *harness) loginWith(email, userAgent string) *response {
	h.t.Helper()
	ua := map[string]string{"User-Agent": userAgent}
	if r := h.do("POST", "/api/login/start", `{"email":"`+email+`"}`, ua); r.status != 200 {
		h.t.Fatalf("login start: %d %s", r.status, r.body)
	}
	body := `{"type":"EMAIL_OTP","encryptedOtpBundle":"sealed:` + testCode + `"}`
	if r := h.do("POST", "/api/login/verify", body, ua); r.status != 202 {
		h.t.Fatalf("verify leg 1: %d %s", r.status, r.body)
	}
	r := h.do("POST", "/api/login/verify", body, map[string]string{
		wire.HeaderWalletSignature: testStamp, wire.HeaderRequestID: testRequestID, "User-Agent": userAgent})
	if r.status != 200 {
		h.t.Fatalf("verify leg 2: %d %s", r.status, r.body)
	}
	return r
}

// devices lists the account's sessions through the BFF and returns each
// one's "device" member (nil when it has none).
func (h *harness) devices() map[string]map[string]any {
	h.t.Helper()
	r := h.do("GET", "/api/auth/sessions", "", nil)
	if r.status != 200 {
		h.t.Fatalf("GET /api/auth/sessions: %d %s", r.status, r.body)
	}
	var list struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(r.body, &list); err != nil {
		h.t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, s := range list.Data {
		d, _ := s["device"].(map[string]any)
		out[s["id"].(string)] = d
	}
	return out
}

func TestSessionDevices(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	own := h.loginWith("device@example.com", macChrome).json(t)
	mine, account := own["id"].(string), own["accountId"].(string)
	fromCLI := h.addSession(account)

	got := h.devices()
	if d := got[mine]; d["label"] != "Chrome on macOS" || d["browser"] != "Chrome 131" || d["os"] != "macOS" {
		t.Errorf("own session's device = %v, want Chrome 131 on macOS", d)
	}
	if d, ok := got[fromCLI]; !ok || d != nil {
		t.Errorf("a session the BFF did not create: listed %v, device %v; want listed without a device", ok, d)
	}

	// A refresh keeps the device and the time of the sign-in.
	before, _ := h.srv.signIns.SignIns(context.Background(), []string{mine})
	body := `{"clientPublicKey":"02ab"}`
	h.clock.Advance(time.Minute)
	r := h.do("POST", "/api/auth/sessions/"+mine+"/refresh", body, map[string]string{
		wire.HeaderWalletSignature: testStamp, wire.HeaderRequestID: testRequestID, "User-Agent": linuxFirefox})
	if r.status != 201 {
		t.Fatalf("refresh: %d %s", r.status, r.body)
	}
	fresh := r.json(t)["id"].(string)
	if d := h.devices()[fresh]; d["label"] != "Chrome on macOS" {
		t.Errorf("refreshed session's device = %v, want the one it replaced", d)
	}
	after, _ := h.srv.signIns.SignIns(context.Background(), []string{mine, fresh})
	if _, ok := after[mine]; ok || !after[fresh].At.Equal(before[mine].At) {
		t.Errorf("after the refresh: %v, want only %s, signed in at %v", after, fresh, before[mine].At)
	}

	// Revoking a session through the BFF forgets its device.
	if r := h.do("DELETE", "/api/auth/sessions/"+fresh, "", signedHeaders); r.status != 204 {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	if left, _ := h.srv.signIns.SignIns(context.Background(), []string{fresh}); len(left) != 0 {
		t.Errorf("a revoked session's sign-in is still stored: %v", left)
	}
}

func TestSessionDeviceBounds(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	huge := "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0 " + strings.Repeat("x", 6000)
	own := h.loginWith("huge@example.com", huge).json(t)
	mine := own["id"].(string)

	got, err := h.srv.signIns.SignIns(context.Background(), []string{mine})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got[mine].UserAgent); n != MaxUserAgent {
		t.Errorf("stored %d bytes of the User-Agent, want %d", n, MaxUserAgent)
	}
	if d := h.devices()[mine]; d["label"] != "Firefox on Windows" {
		t.Errorf("device = %v", d)
	}

	// The sign-in lasts as long as its wallet session, not longer.
	h.clock.Advance(time.Hour)
	if left, _ := h.srv.signIns.SignIns(context.Background(), []string{mine}); len(left) != 0 {
		t.Errorf("an expired session's sign-in is still returned: %v", left)
	}
}

// TestSessionDeviceForgottenWhenEndedElsewhere: a wallet session revoked
// without the BFF (from another device, say) ends this browser's cookie
// session at its next request, and its sign-in goes with it.
func TestSessionDeviceForgottenWhenEndedElsewhere(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		after time.Duration
	}{
		{"found by GET /api/me's own listing", 0},
		{"found by the liveness check", time.Second}, // past the answer the BFF trusts
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			mine := h.loginWith("elsewhere@example.com", macChrome).json(t)["id"].(string)
			h.svc.revokeAll()
			h.clock.Advance(tc.after)
			if r := h.do("GET", "/api/me", "", nil); !r.nobody() {
				t.Fatalf("me after the session was revoked elsewhere: %d %s", r.status, r.body)
			}
			if left, _ := h.srv.signIns.SignIns(context.Background(), []string{mine}); len(left) != 0 {
				t.Errorf("the ended session's sign-in is still stored: %v", left)
			}
		})
	}
}

func TestCleanUserAgent(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{macChrome, macChrome},
		{"  Firefox/1\r\n", "Firefox/1"},
		{"a\x00b\x7fc\xffdé", "abcd"},
		{strings.Repeat("é", 600), ""},
		{strings.Repeat("ab", 600), strings.Repeat("ab", MaxUserAgent/2)},
	}
	for _, tc := range tests {
		if got := CleanUserAgent(tc.in); got != tc.want {
			t.Errorf("CleanUserAgent(%.40q) = %.40q (%d bytes), want %.40q", tc.in, got, len(got), tc.want)
		}
	}
}

func TestAddDevices(t *testing.T) {
	t.Parallel()
	chrome := map[string]Device{"Session:a": {Browser: "Chrome 131", OS: "macOS", Label: "Chrome on macOS"}}
	const member = `"device":{"browser":"Chrome 131","os":"macOS","label":"Chrome on macOS"}`
	tests := []struct{ name, in, want string }{
		{"one of two",
			`{"data":[{"id":"Session:a","type":"EMAIL_OTP"},{"id":"Session:b"}],"hasMore":false}`,
			`{"data":[{"id":"Session:a","type":"EMAIL_OTP",` + member + `},{"id":"Session:b"}],"hasMore":false}`},
		{"whitespace and member order kept",
			"{ \"hasMore\" : false,\n \"data\" : [\n  { \"type\": \"X\", \"id\": \"Session:a\" }\n ]\n}\n",
			"{ \"hasMore\" : false,\n \"data\" : [\n  { \"type\": \"X\", \"id\": \"Session:a\" ," + member + "}\n ]\n}\n"},
		{"escaped id", `{"data":[{"id":"Session\u003aa"}]}`, `{"data":[{"id":"Session\u003aa",` + member + `}]}`},
		{"a device already there", `{"data":[{"id":"Session:a","device":null}]}`, `{"data":[{"id":"Session:a","device":null}]}`},
		{"no session known", `{"data":[{"id":"Session:z"}]}`, `{"data":[{"id":"Session:z"}]}`},
		{"data not an array", `{"data":{"id":"Session:a"}}`, `{"data":{"id":"Session:a"}}`},
		{"not an object", `[{"id":"Session:a"}]`, `[{"id":"Session:a"}]`},
		{"broken", `{"data":[{"id":"Session:a"}`, `{"data":[{"id":"Session:a"}`},
		{"nested objects", `{"data":[{"id":"Session:a","x":{"id":"Session:a"}}]}`, `{"data":[{"id":"Session:a","x":{"id":"Session:a"},` + member + `}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := addDevices([]byte(tc.in), chrome); string(got) != tc.want {
				t.Errorf("addDevices\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// FuzzAddDevices checks that the annotation never breaks the service's
// answer: valid JSON stays valid, the only change is device members added,
// and with nothing to add not one byte changes.
func FuzzAddDevices(f *testing.F) {
	for _, s := range []string{
		`{"data":[{"id":"Session:a"},{"id":"Session:b","x":[1,{"y":2}]}],"hasMore":false}`,
		`{"data":[{}],"data":[{"id":"Session:a"}]}`,
		" {\"data\" :[ {\"id\":\"Session:a\" } ] } ",
		`{"data":[1,"a",null,{"id":1}]}`, `{`, `null`,
	} {
		f.Add([]byte(s))
	}
	devices := map[string]Device{"Session:a": {Label: "Unknown browser"}, "Session:b": {Browser: "Firefox 1", Label: "Firefox"}}
	f.Fuzz(func(t *testing.T, body []byte) {
		if got := addDevices(body, nil); !bytes.Equal(got, body) {
			t.Fatalf("nothing to add, yet %q became %q", body, got)
		}
		got := addDevices(body, devices)
		if json.Valid(body) != json.Valid(got) {
			t.Fatalf("validity changed: %q became %q", body, got)
		}
		if bytes.Contains(body, []byte(`"device"`)) {
			return // a member of that name is left alone; checked by TestAddDevices
		}
		stripped := got
		for _, d := range devices {
			m, _ := json.Marshal(d)
			stripped = bytes.ReplaceAll(stripped, append([]byte(`,"device":`), m...), nil)
			stripped = bytes.ReplaceAll(stripped, append([]byte(`"device":`), m...), nil)
		}
		if !bytes.Equal(stripped, body) {
			t.Fatalf("more than devices changed: %q became %q", body, got)
		}
	})
}
