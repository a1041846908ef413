package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"paywallet/service/payments"
	"paywallet/shared/webhooksig"
	"paywallet/shared/wire"
)

// startSandbox runs the service command in sandbox mode on a temporary
// database, with its workers, and returns its base URL (with the API
// version).
func startSandbox(t *testing.T) string {
	t.Helper()
	t.Setenv("WALLET_PLATFORM_CREDENTIAL", "tok_cmd:cmd-secret")
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--mode", "sandbox", "--dev-mailbox", "--database",
			filepath.Join(t.TempDir(), "svc.db"), "--log-level", "error"}, func(u string) { urls <- u })
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case u := <-urls:
		return u + wire.BasePath
	case err := <-done:
		t.Fatalf("paymentsd exited: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("paymentsd did not start")
	}
	return ""
}

// syncBuffer is a bytes.Buffer safe for a command writing while the test
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// devReceiver is the developer's receiver: it verifies every request as a
// production receiver does (Service-Webhook-Signature, X-Service-Signature
// and the Standard Webhooks headers against the service's JWKS) and keeps
// the events it accepted. It refuses the types in fail with 503.
type devReceiver struct {
	t    *testing.T
	keys webhooksig.JWKS
	fail map[string]bool

	mu       sync.Mutex
	accepted []webhooksig.Event
	bad      []string
}

func (d *devReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	now := time.Now()
	_, err := webhooksig.Verify(r.Header.Get(webhooksig.Header), body, d.keys, now)
	if err == nil {
		err = webhooksig.VerifyCompat(r.Header.Get(webhooksig.CompatHeader), body, d.keys)
	}
	if err == nil {
		err = webhooksig.VerifyStandard(r.Header.Get(webhooksig.StdIDHeader), r.Header.Get(webhooksig.StdTimestampHeader),
			r.Header.Get(webhooksig.StdSignatureHeader), body, d.keys.Ed25519Keys(), now)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		d.bad = append(d.bad, err.Error())
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	var ev webhooksig.Event
	if err := json.Unmarshal(body, &ev); err != nil {
		d.bad = append(d.bad, err.Error())
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if d.fail[ev.Type] {
		http.Error(w, "not today", http.StatusServiceUnavailable)
		return
	}
	d.accepted = append(d.accepted, ev)
	w.WriteHeader(http.StatusNoContent)
}

// has reports whether an event of the type about the resource arrived.
func (d *devReceiver) has(typ, resourceID string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.bad) > 0 {
		d.t.Fatalf("the developer's receiver refused deliveries: %v", d.bad)
	}
	for _, ev := range d.accepted {
		var data struct{ ID string }
		if json.Unmarshal(ev.Data, &data) == nil && ev.Type == typ && data.ID == resourceID {
			return true
		}
	}
	return false
}

func (d *devReceiver) types() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, ev := range d.accepted {
		out = append(out, ev.Type)
	}
	return out
}

// get reads a platform resource from the service.
func get(t *testing.T, base, path string, out any) {
	t.Helper()
	c, err := (&clientFlags{service: base, credential: "tok_cmd:cmd-secret"}).newClient()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.call(context.Background(), "GET", path, nil, out); err != nil {
		t.Fatal(err)
	}
}

// TestListenForwardsTriggeredEvents: `paymentsd listen` registers an
// endpoint for the types asked, forwards a triggered event to the
// developer's receiver with signatures that receiver verifies against the
// service's keys, prints a line per delivery, answers the service with the
// receiver's status (a 503 is the service's failed attempt, to retry), and
// deletes the endpoint when it stops. `paymentsd trigger` prints the
// trigger's answer.
func TestListenForwardsTriggeredEvents(t *testing.T) {
	base := startSandbox(t)
	resp, err := http.Get(base + "/webhooks/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	keys, err := webhooksig.ParseJWKS(jwks)
	if err != nil {
		t.Fatal(err)
	}
	dev := &devReceiver{t: t, keys: keys, fail: map[string]bool{"INTERNAL_ACCOUNT.BALANCE_UPDATED": true}}
	devSrv := httptest.NewServer(dev)
	defer devSrv.Close()

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var out, errOut syncBuffer
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		// The credential from the environment, the service by flag.
		done <- runListen(ctx, []string{"--service", strings.TrimSuffix(base, wire.BasePath), "--forward-to", devSrv.URL + "/hook",
			"--events", "INCOMING_PAYMENT.COMPLETED,INTERNAL_ACCOUNT.BALANCE_UPDATED"}, &out, &errOut, func(id string) { ready <- id })
	}()
	var endpointID string
	select {
	case endpointID = <-ready:
	case err := <-done:
		t.Fatalf("listen stopped: %v\n%s", err, errOut.String())
	case <-time.After(20 * time.Second):
		t.Fatal("listen did not register")
	}
	var ep payments.WebhookEndpoint
	get(t, base, "/webhooks/endpoints/"+endpointID, &ep)
	if !strings.HasPrefix(ep.Description, "paymentsd listen ") || !strings.HasPrefix(ep.URL, "http://127.0.0.1:") || len(ep.EventTypes) != 2 {
		t.Fatalf("endpoint %+v", ep)
	}

	// A funding of the trigger's wallet: INCOMING_PAYMENT.COMPLETED about
	// the transaction the answer names.
	var tout, terr bytes.Buffer
	if err := runTrigger(context.Background(), []string{"INCOMING_PAYMENT.COMPLETED", "--service", base,
		"--credential", "tok_cmd:cmd-secret"}, &tout, &terr); err != nil {
		t.Fatalf("trigger: %v\n%s", err, terr.String())
	}
	line := tout.String()
	if !strings.HasPrefix(line, "INCOMING_PAYMENT.COMPLETED for Transaction:") || !strings.Contains(line, "sent now") {
		t.Fatalf("trigger printed %q", line)
	}
	txID := strings.Fields(line)[2]
	txID = strings.TrimSuffix(txID, ":")

	deadline := time.Now().Add(20 * time.Second)
	for !dev.has("INCOMING_PAYMENT.COMPLETED", txID) || !strings.Contains(out.String(), "-> 503 (") {
		if time.Now().After(deadline) {
			t.Fatalf("not forwarded in time; receiver got %v; listen printed:\n%s", dev.types(), out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, typ := range dev.types() {
		if typ != "INCOMING_PAYMENT.COMPLETED" {
			t.Fatalf("forwarded a %s, which the endpoint does not want", typ)
		}
	}
	printed := out.String()
	if !strings.Contains(printed, "INCOMING_PAYMENT.COMPLETED") || !strings.Contains(printed, "-> 204 (") ||
		!strings.Contains(printed, "-> 503 (") {
		t.Fatalf("listen printed:\n%s", printed)
	}
	// The receiver's 503 is the service's failed attempt (recorded with
	// the worker's next round).
	for {
		var attempts wire.List[payments.WebhookDelivery]
		get(t, base, "/webhooks/deliveries?failed=true&endpointId="+endpointID, &attempts)
		if len(attempts.Data) > 0 {
			if attempts.Data[0].ResponseStatus != http.StatusServiceUnavailable {
				t.Fatalf("failed attempts %+v", attempts.Data)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the 503 was not recorded as a failed attempt")
		}
		time.Sleep(20 * time.Millisecond)
	}

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("listen: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("listen did not stop")
	}
	if !strings.Contains(out.String(), "Deleted endpoint "+endpointID) {
		t.Fatalf("listen printed:\n%s", out.String())
	}
	var list wire.List[payments.WebhookEndpoint]
	get(t, base, "/webhooks/endpoints", &list)
	for _, e := range list.Data {
		if e.ID == endpointID {
			t.Fatalf("endpoint %s is still there after listen stopped", endpointID)
		}
	}
}

// TestTriggerCommand: `paymentsd trigger` takes the type before or after
// the flags, prints the answer, and says why the service refused.
func TestTriggerCommand(t *testing.T) {
	base := startSandbox(t)
	var out, errOut bytes.Buffer
	if err := runTrigger(context.Background(), []string{"--service", base, "CUSTOMER.KYC_REJECTED"}, &out, &errOut); err != nil {
		t.Fatalf("trigger: %v", err)
	}
	if got := out.String(); !strings.HasPrefix(got, "CUSTOMER.KYC_REJECTED for Customer:") || !strings.HasSuffix(got, ": sent now\n") {
		t.Fatalf("printed %q", got)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"NOT.A_TYPE", "--service", base}, []string{"400", "INVALID_INPUT", "type:"}},
		{[]string{"--service", base}, []string{"one event type"}},
		{[]string{"A", "B", "--service", base}, []string{"one event type", "2"}},
		{[]string{"CUSTOMER.KYC_APPROVED", "--service", base, "--credential", "tok_cmd:wrong"}, []string{"401"}},
		{[]string{"CUSTOMER.KYC_APPROVED", "--service", "ftp://x"}, []string{"--service"}},
	} {
		out.Reset()
		err := runTrigger(context.Background(), c.args, &out, &errOut)
		if err == nil {
			t.Fatalf("%v: accepted: %s", c.args, out.String())
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("%v: %v does not say %q", c.args, err, w)
			}
		}
	}
	t.Setenv("WALLET_PLATFORM_CREDENTIAL", "")
	err := runTrigger(context.Background(), []string{"CUSTOMER.KYC_APPROVED", "--service", base}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "WALLET_PLATFORM_CREDENTIAL") {
		t.Fatalf("without a credential: %v", err)
	}
}

// TestListenRefusesBadFlags: listen says what is missing before it
// registers anything.
func TestListenRefusesBadFlags(t *testing.T) {
	t.Setenv("WALLET_PLATFORM_CREDENTIAL", "tok_cmd:cmd-secret")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--forward-to"},
		{[]string{"--forward-to", "localhost:3000"}, "--forward-to"},
		{[]string{"--forward-to", "http://localhost:3000/hook", "--payload", "fat"}, "--payload"},
		{[]string{"--forward-to", "http://localhost:3000/hook", "extra"}, "unexpected"},
	} {
		var out, errOut bytes.Buffer
		err := runListen(context.Background(), c.args, &out, &errOut, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%v: %v", c.args, err)
		}
	}
}

// TestHelpKeepsTheCredential: the credential from the environment is not a
// flag default, which the help would print (it did).
func TestHelpKeepsTheCredential(t *testing.T) {
	const secret = "tok_help:do-not-print-me"
	t.Setenv("WALLET_PLATFORM_CREDENTIAL", secret)
	for _, cmd := range []string{"listen", "trigger"} {
		var out, errOut strings.Builder
		command(t.Context(), []string{cmd, "-h"}, &out, &errOut)
		if s := out.String() + errOut.String(); strings.Contains(s, "do-not-print-me") || !strings.Contains(s, "credential") {
			t.Errorf("%s -h printed:\n%s", cmd, s)
		}
	}
}
