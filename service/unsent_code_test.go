package service

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"paywallet/service/mail"
	"paywallet/service/store"
	"paywallet/shared/wire"
)

// flakyMailer delivers to box unless down is set.
type flakyMailer struct {
	box  *mail.Mailbox
	down atomic.Bool
}

func (m *flakyMailer) Send(ctx context.Context, msg mail.Message) error {
	if m.down.Load() {
		return errors.New("smtp: connection refused")
	}
	return m.box.Send(ctx, msg)
}

// TestUnsentCodeDoesNotBlockARetry: a code that could not be e-mailed
// answers 503 "try again shortly" after its transaction committed; trying
// again at once must work (the unsent code does not count against the
// resend interval, and cannot be used), and a credential whose first code
// was not sent is not left behind to refuse the retry as a duplicate.
func TestUnsentCodeDoesNotBlockARetry(t *testing.T) {
	m := &flakyMailer{}
	e := newEnv(t, func(c *Config) { m.box = c.Mailer.(*mail.Mailbox); c.Mailer = m })
	w := e.newWallet("flaky@example.com")

	// A challenge whose e-mail fails, then one at once that works.
	m.down.Store(true)
	r := e.do("POST", "/auth/credentials/"+w.credential.ID+"/challenge", map[string]any{}, nil)
	e.mustStatus(r, http.StatusServiceUnavailable)
	m.down.Store(false)
	r = e.do("POST", "/auth/credentials/"+w.credential.ID+"/challenge", map[string]any{}, nil)
	if r.status != http.StatusOK {
		t.Fatalf("asking again right after the 503: %d %s", r.status, r.body)
	}
	// A credential created while mail is down is not kept.
	fresh := e.newWallet("second@example.com")
	if err := e.store.Tx(t.Context(), func(tx store.Tx) error { return tx.DeleteCredential(t.Context(), fresh.credential.ID) }); err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"type": wire.TypeEmailOTP, "accountId": fresh.account.ID}
	m.down.Store(true)
	r = e.do("POST", "/auth/credentials", body, nil)
	e.mustStatus(r, http.StatusServiceUnavailable)
	r = e.do("GET", "/auth/credentials?accountId="+fresh.account.ID, nil, nil)
	var list wire.Data[wire.AuthMethod]
	r.decode(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("after the 503 the account has credentials: %s", r.body)
	}
	m.down.Store(false)
	r = e.do("POST", "/auth/credentials", body, nil)
	if r.status != http.StatusCreated {
		t.Fatalf("creating again after the 503: %d %s", r.status, r.body)
	}
}
