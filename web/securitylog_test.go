package web

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestSecurityLogSentences: every type of the security log reads as a
// sentence (views/security/log.js), in English and German, with the
// network in words; an unknown type still says what it is.
func TestSecurityLogSentences(t *testing.T) {
	t.Parallel()
	ctx := moduleTab(t)
	type record struct {
		Type    string         `json:"type"`
		Details map[string]any `json:"details"`
	}
	cases := []struct {
		rec    record
		en, de string
	}{
		{record{"SIGNED_IN", map[string]any{"method": "PASSKEY", "device": "Chrome on Android"}}, "Signed in with a passkey on Chrome on Android", "Angemeldet mit einem Passkey auf Chrome on Android"},
		{record{"SIGNED_IN", map[string]any{"method": "EMAIL_OTP"}}, "Signed in with an e-mail code", "Angemeldet mit einem E-Mail-Code"},
		{record{"SIGN_IN_FAILED", map[string]any{"method": "EMAIL_OTP", "reason": "WRONG_CODE"}}, "A wrong code was entered", "Ein falscher Code wurde eingegeben"},
		{record{"SIGN_IN_FAILED", map[string]any{"method": "PASSKEY", "reason": "PASSKEY_REFUSED"}}, "A sign-in with a passkey was refused", "Eine Anmeldung mit Passkey wurde abgelehnt"},
		{record{"LOCKED_OUT", map[string]any{"until": "2026-12-07T10:15:00Z", "failedAttempts": 5, "action": "PAYMENTS"}}, "Payments were locked until Dec 7, 10:15 AM after 5 failed confirmations", "Zahlungen wurden nach 5 fehlgeschlagenen Bestätigungen bis 7. Dez., 10:15 gesperrt"},
		{record{"SESSION_REVOKED", map[string]any{"sessionId": "Session:1", "by": "YOU"}}, "Signed out Chrome on macOS (by you)", "Chrome on macOS abgemeldet (von dir)"},
		{record{"SESSION_REVOKED", map[string]any{"sessionId": "Session:2", "by": "EMAIL_LINK"}}, "Signed out a session (with the link in a security e-mail)", "Eine Sitzung abgemeldet (mit dem Link aus einer Sicherheits-E-Mail)"},
		{record{"SIGN_IN_METHOD_ADDED", map[string]any{"method": "PASSKEY", "credentialId": "Credential:1", "nickname": "Phone"}}, "Added a passkey “Phone”", "Passkey „Phone“ hinzugefügt"},
		{record{"SIGN_IN_METHOD_REMOVED", map[string]any{"method": "PASSKEY", "credentialId": "Credential:1"}}, "Removed the passkey “Phone”", "Passkey „Phone“ entfernt"},
		{record{"EMAIL_CHANGED", map[string]any{"from": "a***@example.com", "to": "b***@example.com"}}, "Changed the e-mail address from a***@example.com to b***@example.com", "E-Mail-Adresse von a***@example.com in b***@example.com geändert"},
		{record{"RECOVERY_PHRASE_EXPORTED", map[string]any{}}, "Showed the recovery phrase", "Wiederherstellungsphrase angezeigt"},
		{record{"STEP_UP_PASSED", map[string]any{"action": "PAYMENT", "factor": "PASSKEY"}}, "Confirmed a payment with a passkey", "Mit einem Passkey bestätigt: eine Zahlung"},
		{record{"STEP_UP_FAILED", map[string]any{"action": "LIMITS_LOOSEN", "factor": "EMAIL_OTP"}}, "A confirmation of raising the limits failed", "Eine Bestätigung für das Anheben der Limits ist fehlgeschlagen"},
		{record{"LIMITS_CHANGED", map[string]any{
			"before": map[string]any{"currency": "USD", "perPayment": nil, "daily": nil, "newRecipientCoolingOffHours": 0, "pending": nil},
			"after": map[string]any{"currency": "USD", "perPayment": 5000, "daily": nil, "newRecipientCoolingOffHours": 0,
				"pending": map[string]any{"daily": 200000, "effectiveAt": "2026-12-07T10:15:00Z"}}}},
			"Changed the limits: per payment $50.00; daily $2,000.00 from Dec 7, 10:15 AM", "Limits geändert: pro Zahlung 50,00 $; täglich 2.000,00 $ ab 7. Dez., 10:15"},
		{record{"SOMETHING_NEW", map[string]any{}}, "Security event SOMETHING_NEW", "Sicherheitsereignis SOMETHING_NEW"},
	}
	var in []record
	for _, c := range cases {
		in = append(in, c.rec)
	}
	for _, lang := range []string{"en", "de"} {
		var got []string
		inModules(t, ctx, map[string]any{"lang": lang, "records": in}, `
  await i.setLocale(input.lang === "de" ? "de-DE" : "en-US");
  const log = await import("/js/views/security/log.js");
  const known = {sessions: new Map([["Session:1", "Chrome on macOS"]]), passkeys: new Map([["Credential:1", "Phone"]])};
  return input.records.map((r) => log.sentence(r.type, r.details, known).replaceAll("\u00a0", " ").replaceAll("\u202f", " "));`, &got)
		if len(got) != len(cases) {
			t.Fatalf("%s: %d sentences for %d records: %q", lang, len(got), len(cases), got)
		}
		for i, c := range cases {
			want := c.en
			if lang == "de" {
				want = c.de
			}
			if got[i] != want {
				t.Errorf("%s %s: %q, want %q", lang, c.rec.Type, got[i], want)
			}
		}
	}
	var nets []string
	inModules(t, ctx, []string{"203.0.113.0/24", "2001:db8:1::/48", "loopback", "private", ""}, `
  await i.setLocale("en-US");
  const log = await import("/js/views/security/log.js");
  return input.map(log.networkText);`, &nets)
	want := []string{"from 203.0.113.0/24", "from 2001:db8:1::/48", "from this computer", "from a private network", ""}
	for i := range want {
		if i >= len(nets) || nets[i] != want[i] {
			t.Errorf("networks: %q, want %q", nets, want)
			break
		}
	}
}

// fakeLogAPI stands in for js/api.js in TestSecurityLogPagesAndDownload: GET
// /api/security-events answers window.__records (newest first) in pages
// of the asked limit, with the position as the cursor, and keeps the
// paths asked in window.__asked.
const fakeLogAPI = `
export class ApiError extends Error {
  constructor(status, code, message, details) { super(message || code); this.status = status; this.code = code; this.details = details; }
  fieldErrors() { return {}; }
}
export function onSignedOut() {}
export function signalSignedOut() {}
export function messageOf(err) { return err && err.message ? err.message : String(err); }
export async function api(method, path) {
  (window.__asked ||= []).push(method + " " + path);
  const url = new URL(path, location.href);
  if (url.pathname !== "/api/security-events") throw new ApiError(404, "NOT_FOUND", "no " + path);
  const limit = Number(url.searchParams.get("limit"));
  const from = Number(url.searchParams.get("cursor") || "0");
  const data = window.__records.slice(from, from + limit);
  const more = from + limit < window.__records.length;
  return { status: 200, data: { data, hasMore: more, nextCursor: more ? String(from + limit) : undefined } };
}
`

// TestSecurityLogPagesAndDownload: the log shows its first page with
// "Show more", which asks for the next with the service's cursor; the
// download collects every page (more than two of the export's pages) and
// saves the records unchanged, in security-log-YYYY-MM-DD.json.
func TestSecurityLogPagesAndDownload(t *testing.T) {
	t.Parallel()
	const total = 205 // more than two pages of a download (100 each)
	ctx := moduleTabWith(t, map[string]string{"/js/api.js": fakeLogAPI})
	type result struct {
		First, Second, Asked    []string
		Shown                   int
		MoreAfterFirst, MoreEnd bool
		File                    string
		Records, Served         []map[string]any
		Unchanged               []bool
		Status                  string
	}
	var got result
	inModules(t, ctx, total, `
  await i.setLocale("en-US");
  const total = input;
  document.body.innerHTML = '<section id="security-log" hidden><p id="security-log-error" hidden></p><p id="security-log-empty" hidden></p>' +
    '<ul id="security-log-list"></ul><button id="security-log-more" hidden></button><button id="security-log-refresh"></button>' +
    '<button id="security-log-download"></button><p id="security-log-download-status"></p></section>';
  // Records that differ in every field, some with an accountId and
  // nested details, so that a field lost or changed shows.
  window.__records = Array.from({length: total}, (_, n) => {
    const seq = total - n;
    const r = {id: "SecurityEvent:" + seq, customerId: "Customer:1", sequence: seq, type: seq % 3 === 0 ? "SESSION_REVOKED" : "SIGNED_IN",
      details: seq % 3 === 0 ? {by: "YOU", sessionId: "Session:" + seq, nested: {list: [seq, "x" + seq, null, true], n: seq / 4}}
        : {method: "EMAIL_OTP", device: "Device " + seq, network: "loopback", sessionId: "Session:" + seq},
      createdAt: new Date(Date.UTC(2026, 11, 6, 7, 0, 0) + seq * 1234567).toISOString().replace("Z", "123Z"),
      hash: "h" + seq, previousHash: "h" + (seq - 1)};
    if (seq % 2 === 0) r.accountId = "Account:" + (seq % 5);
    return r;
  });
  let saved = null;
  URL.createObjectURL = (blob) => { saved = blob; return "blob:fake"; };
  HTMLAnchorElement.prototype.click = function () { window.__file = this.download; };
  const log = await import("/js/views/security/log.js");
  log.initLog();
  log.showLog();
  const items = () => [...document.querySelectorAll("#security-log-list > li")].map((li) => li.dataset.id);
  const until = async (f) => { for (let n = 0; n < 100 && !f(); n++) await new Promise((r) => setTimeout(r, 20)); };
  const more = document.getElementById("security-log-more");
  await until(() => items().length > 0);
  const first = items();
  const moreAfterFirst = !more.hidden;
  more.click();
  await until(() => items().length > first.length);
  const second = items();
  for (let n = 0; n < 20 && !more.hidden && items().length < total; n++) {
    const before = items().length;
    more.click();
    await until(() => items().length > before);
  }
  await until(() => more.hidden);
  const shown = items().length;
  const moreEnd = !more.hidden;
  document.getElementById("security-log-download").click();
  await until(() => saved !== null && document.getElementById("security-log-download-status").textContent.startsWith("Downloaded"));
  const file = saved === null ? {records: []} : JSON.parse(await saved.text());
  const records = Array.isArray(file.records) ? file.records : [];
  return {First: first, Second: second, Shown: shown, Asked: window.__asked, MoreAfterFirst: moreAfterFirst, MoreEnd: moreEnd,
    File: window.__file, Records: records, Served: window.__records,
    Unchanged: window.__records.map((r, k) => JSON.stringify(r) === JSON.stringify(records[k])),
    Status: document.getElementById("security-log-download-status").textContent};`, &got)
	if len(got.First) != 20 || got.First[0] != fmt.Sprintf("SecurityEvent:%d", total) || !got.MoreAfterFirst {
		t.Errorf("first page: %d records from %v, Show more %v", len(got.First), got.First, got.MoreAfterFirst)
	}
	if len(got.Second) != 40 || got.Second[20] != fmt.Sprintf("SecurityEvent:%d", total-20) {
		t.Errorf("after Show more: %d records %v", len(got.Second), got.Second)
	}
	if got.Shown != total || got.MoreEnd {
		t.Errorf("after every Show more: %d records shown of %d, Show more still offered %v", got.Shown, total, got.MoreEnd)
	}
	// The view's pages of 20, each after the cursor of the one before,
	// then the download's pages of 100 in the same way: all three of them.
	var wantAsked []string
	for from := 0; from < total; from += 20 {
		q := "GET /api/security-events?limit=20"
		if from > 0 {
			q += fmt.Sprintf("&cursor=%d", from)
		}
		wantAsked = append(wantAsked, q)
	}
	wantAsked = append(wantAsked, "GET /api/security-events?limit=100", "GET /api/security-events?limit=100&cursor=100",
		"GET /api/security-events?limit=100&cursor=200")
	if strings.Join(got.Asked, "\n") != strings.Join(wantAsked, "\n") {
		t.Errorf("asked\n%s\nwant\n%s", strings.Join(got.Asked, "\n"), strings.Join(wantAsked, "\n"))
	}
	if !regexp.MustCompile(`^security-log-\d{4}-\d{2}-\d{2}\.json$`).MatchString(got.File) {
		t.Errorf("file name %q", got.File)
	}
	// Every record served, in order, and each exactly as served.
	if len(got.Served) != total {
		t.Fatalf("the fake served %d records, want %d", len(got.Served), total)
	}
	if len(got.Records) != total {
		t.Errorf("the file has %d records, want %d", len(got.Records), total)
	}
	for k := range got.Served {
		if k >= len(got.Records) {
			break
		}
		if !got.Unchanged[k] || !reflect.DeepEqual(got.Records[k], got.Served[k]) {
			t.Errorf("record %d of the file:\n%v\nserved:\n%v", k, got.Records[k], got.Served[k])
		}
	}
	if got.Status != fmt.Sprintf("Downloaded %s: %d records.", got.File, total) {
		t.Errorf("status %q", got.Status)
	}
}
