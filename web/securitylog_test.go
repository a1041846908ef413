package web

import (
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
		for i, c := range cases {
			want := c.en
			if lang == "de" {
				want = c.de
			}
			if i < len(got) && got[i] != want {
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
