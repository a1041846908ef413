package payments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/service/strictjson"
	"paywallet/shared/webhooksig"
	"paywallet/shared/wire"
)

// Events and webhooks (DESIGN "Events"). Every change a platform hears
// about is an event, recorded by emit in the same store transaction as
// the change, so an event exists exactly when its change committed. The
// API's transaction only appends one row to the event log
// (store.WebhookTx.RecordEvents); the worker (webhookworker.go) then
// catalogues the log in commit order (each event gets its resource's next
// sequence), delivers the events to every webhook endpoint that wants
// them (webhookendpoints.go), in order per resource, signed with every
// active key (webhookkeys.go), and drops them after Config.EventRetention.
// The catalogue is the platform's to read (events.go: GET /events).

// webhooks is the Service's webhook state.
type webhooks struct {
	keys keyState      // the signing keys (webhookkeys.go)
	wake chan struct{} // a committed change emitted events

	mu     sync.Mutex
	cfgRaw []byte // the platform_config setting last parsed
	cfg    platformConfig
}

// ---- the platform configuration

// configSetting holds the platform configuration as JSON (platformConfig).
// It is not secret and not sealed.
const configSetting = "platform_config"

type platformConfig struct {
	ID string `json:"id"`
	// WebhookEndpoint is where a version before webhook endpoints kept
	// the default endpoint's URL; initWebhooks moves it to an endpoint.
	WebhookEndpoint string `json:"webhookEndpoint,omitempty"`
	// StepUpPolicy is the operator's step-up policy (stepuppolicy.go);
	// nil holds nothing.
	StepUpPolicy *StepUpPolicy `json:"stepUpPolicy,omitempty"`
	CreatedAt    string        `json:"createdAt"`
	UpdatedAt    string        `json:"updatedAt"`
}

// PlatformConfig is the reference's PlatformConfig, with the fields
// this service has. WebhookEndpoint is the URL of the default endpoint.
type PlatformConfig struct {
	ID              string `json:"id"`
	UmaDomain       string `json:"umaDomain"`
	WebhookEndpoint string `json:"webhookEndpoint,omitempty"`
	// StepUpPolicy (extension): the actions of embedded wallets held
	// until the person confirms them; null holds nothing.
	StepUpPolicy *StepUpPolicy `json:"stepUpPolicy"`
	CreatedAt    string        `json:"createdAt"`
	UpdatedAt    string        `json:"updatedAt"`
}

// readConfig returns the stored configuration, parsing it only when the
// stored bytes changed since the last call.
func (s *Service) readConfig(ctx context.Context, tx store.Tx) (platformConfig, error) {
	raw, err := tx.GetSetting(ctx, configSetting)
	if err != nil {
		return platformConfig{}, fmt.Errorf("service: read the platform configuration: %w", err)
	}
	h := &s.hooks
	h.mu.Lock()
	defer h.mu.Unlock()
	if !bytes.Equal(raw, h.cfgRaw) {
		var c platformConfig
		if err := json.Unmarshal(raw, &c); err != nil {
			return platformConfig{}, fmt.Errorf("service: the stored platform configuration is not JSON: %w", err)
		}
		h.cfgRaw, h.cfg = raw, c
	}
	return h.cfg, nil
}

// writeConfig replaces the stored configuration read as old.
func (s *Service) writeConfig(ctx context.Context, tx store.Tx, c platformConfig) error {
	old, err := tx.GetSetting(ctx, configSetting)
	if err != nil {
		return err
	}
	value, err := json.Marshal(c)
	if err != nil {
		return err
	}
	won, err := tx.ReplaceSetting(ctx, configSetting, old, value)
	if err != nil {
		return err
	}
	if !won {
		return errors.New("service: the platform configuration changed while it was written")
	}
	return nil
}

// configJSON is the configuration with the default endpoint's URL.
func (s *Service) configJSON(ctx context.Context, tx store.Tx) (PlatformConfig, error) {
	c, err := s.readConfig(ctx, tx)
	if err != nil {
		return PlatformConfig{}, err
	}
	out := PlatformConfig{ID: c.ID, UmaDomain: s.cfg.UMADomain, StepUpPolicy: c.StepUpPolicy, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	d, err := defaultEndpoint(ctx, tx)
	if err != nil {
		return PlatformConfig{}, err
	}
	if d != nil {
		out.WebhookEndpoint = d.URL
	}
	return out, nil
}

// validWebhookURL accepts an absolute http or https URL with a host and
// no credentials or fragment, of at most 2048 bytes.
func validWebhookURL(raw string) string {
	if len(raw) > 2048 {
		return "must be at most 2048 characters"
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" || u.Opaque != "" {
		return "must be an absolute http or https URL, such as https://platform.example/webhooks"
	}
	if u.User != nil {
		return "must not carry credentials"
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return "must not have a fragment"
	}
	return ""
}

// GetConfig is the platform configuration (GET /config).
func (s *Service) GetConfig(ctx context.Context) (PlatformConfig, error) {
	return read(ctx, s, func(tx store.Tx) (PlatformConfig, error) { return s.configJSON(ctx, tx) })
}

// configFieldsElsewhere are PlatformConfigUpdateRequest fields of the
// reference that this service does not let the platform change.
var configFieldsElsewhere = map[string]string{
	"umaDomain":                       "is set by the operator (the service's UMA domain) and cannot be changed here",
	"supportedCurrencies":             "is not configurable in this service (the wallet currency is the operator's choice)",
	"embeddedWalletConfig":            "is not configurable in this service",
	"cardTokenization2faConfig":       "is not configurable in this service (no cards)",
	"feeConfigs":                      "is not configurable in this service",
	"proxyUmaSubdomain":               "is not configurable in this service",
	"id":                              "is read-only",
	"createdAt":                       "is read-only",
	"updatedAt":                       "is read-only",
	"isRegulatedFinancialInstitution": "is read-only",
}

// PlatformConfigUpdate is the request of UpdateConfig: the members of the
// JSON object as they came, so that every field the platform cannot change
// is named with its reason (nil: the body was not an object).
type PlatformConfigUpdate map[string]json.RawMessage

// UpdateConfig changes the platform configuration (PATCH /config):
// webhookEndpoint sets the default endpoint's URL (creating it, enabled,
// for every event type, when there is none) or, null or "", deletes the
// default endpoint; stepUpPolicy replaces the step-up policy (null: none).
// Every other field is refused, each one named. It answers the
// configuration as it is after the change.
func (s *Service) UpdateConfig(ctx context.Context, req PlatformConfigUpdate) (PlatformConfig, error) {
	if req == nil {
		return PlatformConfig{}, errorf(CodeInvalidRequestFormat, "the body must be a JSON object")
	}
	var fe fieldErrors
	var endpoint *string
	var policy **StepUpPolicy
	for name, v := range req {
		if name == "stepUpPolicy" {
			var p *StepUpPolicy
			dec := json.NewDecoder(bytes.NewReader(v))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&p); err != nil {
				problems := strictjson.Problems(v, &p, name)
				for _, pr := range problems {
					fe.add(pr.Field, pr.Message)
				}
				if len(problems) == 0 {
					fe.add(name, "must be a StepUpPolicy object or null")
				}
				continue
			}
			if p != nil {
				p.check(s, name+".", &fe)
			}
			policy = &p
			continue
		}
		if name != "webhookEndpoint" {
			if why, ok := configFieldsElsewhere[name]; ok {
				fe.add(name, why)
			} else {
				fe.add(name, "unknown field")
			}
			continue
		}
		var u *string
		if err := json.Unmarshal(v, &u); err != nil {
			fe.add(name, "must be a string (an absolute http or https URL) or null")
			continue
		}
		if u == nil {
			u = new(string)
		}
		if *u != "" {
			if why := validWebhookURL(*u); why != "" {
				fe.addConstraint(name, why, wire.FieldConstraint{Format: "url"})
				continue
			}
		}
		endpoint = u
	}
	if e := fe.err(); e != nil {
		return PlatformConfig{}, e
	}
	out, err := commit(ctx, s, "", nil, func(tx store.Tx) (PlatformConfig, error) {
		if policy != nil {
			c, err := s.readConfig(ctx, tx)
			if err != nil {
				return PlatformConfig{}, err
			}
			c.StepUpPolicy, c.UpdatedAt = *policy, timestamp(s.now())
			if err := s.writeConfig(ctx, tx, c); err != nil {
				return PlatformConfig{}, err
			}
		}
		if endpoint != nil {
			changed, err := s.setDefaultEndpoint(ctx, tx, *endpoint)
			if err != nil {
				return PlatformConfig{}, err
			}
			if changed {
				c, err := s.readConfig(ctx, tx)
				if err != nil {
					return PlatformConfig{}, err
				}
				c.UpdatedAt = timestamp(s.now())
				if err := s.writeConfig(ctx, tx, c); err != nil {
					return PlatformConfig{}, err
				}
			}
		}
		return s.configJSON(ctx, tx)
	})
	if err == nil {
		s.wakeWebhooks()
	}
	return out, err
}

// initWebhooks loads (on first start creates) the signing keys, makes sure
// the platform configuration exists, moves a webhookEndpoint kept in it
// by an older version to the default endpoint, and applies
// Config.WebhookURL.
func (s *Service) initWebhooks(ctx context.Context) error {
	if s.cfg.WebhookURL != "" {
		if why := validWebhookURL(s.cfg.WebhookURL); why != "" {
			return fmt.Errorf("service: Config.WebhookURL %s", why)
		}
	}
	if err := s.loadWebhookKeys(ctx); err != nil {
		return err
	}
	now := timestamp(s.now())
	fresh, err := json.Marshal(platformConfig{ID: ids.New("PlatformConfig"), CreatedAt: now, UpdatedAt: now})
	if err != nil {
		return err
	}
	err = s.store.Tx(ctx, func(tx store.Tx) error {
		if _, err := tx.PutSettingIfAbsent(ctx, configSetting, fresh); err != nil {
			return err
		}
		c, err := s.readConfig(ctx, tx)
		if err != nil {
			return err
		}
		if p := s.cfg.StepUp; p != nil {
			// The operator's flag sets the policy at every start.
			c.StepUpPolicy, c.UpdatedAt = p, now
			if err := s.writeConfig(ctx, tx, c); err != nil {
				return err
			}
		}
		want := s.cfg.WebhookURL
		var from *int64
		if c.WebhookEndpoint != "" {
			// Kept by a version before endpoints: it becomes the
			// default endpoint, from the events the old outbox had
			// not delivered (migration 0017).
			d, err := defaultEndpoint(ctx, tx)
			if err != nil {
				return err
			}
			if want == "" && d == nil {
				want = c.WebhookEndpoint
			}
			if d == nil {
				if from, err = upgradeCursor(ctx, tx); err != nil {
					return err
				}
			}
			c.WebhookEndpoint = ""
			if err := s.writeConfig(ctx, tx, c); err != nil {
				return err
			}
		}
		if want == "" {
			return nil
		}
		_, err = s.setDefaultEndpointFrom(ctx, tx, want, from)
		return err
	})
	if err != nil {
		return fmt.Errorf("service: load the webhook configuration: %w", err)
	}
	return nil
}

// upgradeSetting holds, after migration 0017, the seq just before the
// oldest event the old outbox had not delivered (absent when none).
const upgradeSetting = "webhook_upgrade_cursor"

// upgradeCursor reads upgradeSetting: nil when absent.
func upgradeCursor(ctx context.Context, tx store.Tx) (*int64, error) {
	v, err := tx.GetSetting(ctx, upgradeSetting)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("service: the stored %s %q is not a cursor", upgradeSetting, v)
	}
	return &n, nil
}

// ---- recording events

// webhookEnvelope is the body of a webhook (webhooksig.Event, with data
// still a Go value).
type webhookEnvelope struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      any    `json:"data"`
	Sequence  int64  `json:"sequence,omitempty"`
}

func encodeEnvelope(e webhookEnvelope) ([]byte, error) { return encodeJSON(e) }

// withSequence is body, an envelope recorded without its sequence, with
// "sequence" added as its last member, which is where encodeEnvelope puts
// it, so the bytes are those of encoding the whole envelope at once. A
// body that carries it already is returned as it is.
func withSequence(b []byte, seq int64) []byte {
	tail := `,"sequence":` + strconv.FormatInt(seq, 10) + `}`
	if seq < 1 || len(b) < 2 || b[len(b)-1] != '}' || bytes.HasSuffix(b, []byte(tail)) {
		return b
	}
	out := make([]byte, 0, len(b)+len(tail))
	out = append(out, b[:len(b)-1]...)
	if len(b) == 2 { // {} (never recorded, but keep it JSON)
		return append(append(out, tail[1:len(tail)-1]...), '}')
	}
	return append(out, tail...)
}

// eventBody is the catalogued event as a snapshot endpoint and GET /events
// show it: the envelope with its sequence.
func eventBody(e *store.Event) []byte { return withSequence(e.Body, e.Sequence) }

// thinBody is the event as a thin endpoint gets it: the envelope with
// data holding only the resource's id, so the receiver fetches the
// resource as it is when it handles the event.
func thinBody(e *store.Event) ([]byte, error) {
	return encodeEnvelope(webhookEnvelope{ID: e.ID, Type: e.Type, Timestamp: timestamp(e.CreatedAt),
		Data: struct {
			ID string `json:"id"`
		}{e.ResourceID}, Sequence: e.Sequence})
}

// noEvents reports that state changes record no events now
// (Config.NoEvents, PauseEvents).
func (s *Service) noEvents() bool { return s.cfg.NoEvents || s.eventsPaused.Load() }

// PauseEvents stops (true) or resumes (false) recording events, as
// Config.NoEvents does for a whole run: the state changes made while
// paused record none, so no webhook is ever sent for them and GET /events
// never lists them. It exists so that a benchmark can compare the API
// with and without its events on one database, in one process, for the
// same customers, alternating (cmd/bench's events step); a deployment
// sets Config.NoEvents or leaves events on.
func (s *Service) PauseEvents(paused bool) { s.eventsPaused.Store(paused) }

// emit records an event of the resource in tx. data is the resource as the
// API shows it after the change.
func (s *Service) emit(ctx context.Context, tx store.Tx, typ, resourceID string, data any) error {
	if s.noEvents() {
		return nil
	}
	now := s.now()
	id := ids.New("Webhook")
	// The envelope is recorded without its sequence, which the catalogue
	// assigns; eventBody adds it as the last member when the event is
	// sent or shown.
	body, err := encodeEnvelope(webhookEnvelope{ID: id, Type: typ, Timestamp: timestamp(now), Data: data})
	if err != nil {
		return err
	}
	if o, ok := tx.(*outboxTx); ok {
		o.emitted = true
	}
	// The store joins the operation's events into one log row and sends
	// it with the transaction's next statement (PostgreSQL): an
	// operation that emits before its last write pays no round trip for
	// its events.
	return tx.RecordEvents(ctx, []store.NewEvent{{ID: id, Type: typ, ResourceID: resourceID, Body: body, CreatedAt: now}})
}

// transactionEventType is the reference's webhook type for a transaction
// in the given status.
func transactionEventType(x *store.Transaction) string {
	prefix := "OUTGOING_PAYMENT."
	if x.Type == "INCOMING" {
		prefix = "INCOMING_PAYMENT."
	}
	switch x.Status {
	case "REJECTED":
		return prefix + "FAILED"
	case "REFUNDED":
		return prefix + "REFUND_COMPLETED"
	}
	return prefix + x.Status
}

// emitTransaction records the transaction's event for its current status.
func (s *Service) emitTransaction(ctx context.Context, tx store.Tx, x *store.Transaction) error {
	if s.noEvents() {
		return nil // nor the resource's JSON form
	}
	return s.emit(ctx, tx, transactionEventType(x), x.ID, s.transactionJSON(x))
}

// emitBalance records INTERNAL_ACCOUNT.BALANCE_UPDATED with the account as
// it is now in tx.
func (s *Service) emitBalance(ctx context.Context, tx store.Tx, accountID string) error {
	if s.noEvents() {
		return nil // nor the read
	}
	a, err := tx.GetInternalAccount(ctx, accountID)
	if err != nil {
		return err
	}
	return s.emitWallet(ctx, tx, a)
}

// emitWallet records INTERNAL_ACCOUNT.BALANCE_UPDATED with a, the account
// as a post in tx left it (holdPayment's answer): no read of the row the
// post just wrote.
func (s *Service) emitWallet(ctx context.Context, tx store.Tx, a *store.InternalAccount) error {
	if s.noEvents() {
		return nil
	}
	return s.emit(ctx, tx, webhooksig.InternalAccountBalanceUpdated, a.ID, s.internalAccountJSON(a))
}

// emitExecuted records a payment's PROCESSING event and its wallet's
// balance after the hold, so that both join one log row that the next
// statement carries.
func (s *Service) emitExecuted(ctx context.Context, tx store.Tx, x *store.Transaction, wallet *store.InternalAccount) error {
	if err := s.emitTransaction(ctx, tx, x); err != nil {
		return err
	}
	return s.emitWallet(ctx, tx, wallet)
}

// outboxStore wakes the worker after a transaction that emitted events
// committed.
type outboxStore struct {
	store.Store
	wake func()
}

// outboxTx is the store.Tx outboxStore hands to fn: it notes that emit
// recorded events.
type outboxTx struct {
	store.Tx
	emitted bool
}

func (o *outboxStore) Tx(ctx context.Context, fn func(store.Tx) error) error {
	return o.run(ctx, "", fn)
}

func (o *outboxStore) TxFor(ctx context.Context, key string, fn func(store.Tx) error) error {
	return o.run(ctx, key, fn)
}

func (o *outboxStore) run(ctx context.Context, key string, fn func(store.Tx) error) error {
	var last *outboxTx
	wrapped := func(tx store.Tx) error {
		last = &outboxTx{Tx: tx}
		return fn(last)
	}
	var err error
	if key == "" {
		err = o.Store.Tx(ctx, wrapped)
	} else {
		err = o.Store.TxFor(ctx, key, wrapped)
	}
	if err == nil && last != nil && last.emitted {
		o.wake()
	}
	return err
}

func (s *Service) wakeWebhooks() {
	select {
	case s.hooks.wake <- struct{}{}:
	default:
	}
}

// ---- the test webhook

// TestWebhookResponse is the reference's TestWebhookResponse.
type TestWebhookResponse struct {
	URL            string `json:"url,omitempty"`
	ResponseStatus int    `json:"response_status"`
	ResponseBody   string `json:"response_body,omitempty"`
}

// TestWebhook sends a TEST event, with "data": {} as the reference's
// example has it, to the default endpoint now, outside the event log
// (POST /sandbox/webhooks/test, sandbox only), and answers the receiver's
// status and body when it answered 2xx; WEBHOOK_DELIVERY_ERROR (the same
// fields under details) otherwise, WEBHOOK_ENDPOINT_NOT_SET without a
// default endpoint, and FORBIDDEN in production mode.
func (s *Service) TestWebhook(ctx context.Context) (TestWebhookResponse, error) {
	if s.mode != ModeSandbox {
		return TestWebhookResponse{}, ErrSandboxOnly
	}
	d, err := read(ctx, s, func(tx store.Tx) (*store.WebhookEndpoint, error) { return defaultEndpoint(ctx, tx) })
	if err != nil {
		return TestWebhookResponse{}, err
	}
	if d == nil {
		return TestWebhookResponse{}, errorf("WEBHOOK_ENDPOINT_NOT_SET", "no webhookEndpoint is configured; set one with PATCH /config")
	}
	id := ids.New("Webhook")
	event, err := encodeEnvelope(webhookEnvelope{ID: id, Type: webhooksig.Test, Timestamp: timestamp(s.now()), Data: struct{}{}})
	if err != nil {
		return TestWebhookResponse{}, err
	}
	status, answer, err := s.post(ctx, d.URL, event, func(h http.Header) error { return s.signDelivery(ctx, h, id, event) })
	out := TestWebhookResponse{URL: d.URL, ResponseStatus: status, ResponseBody: answer}
	if err != nil || status < 200 || status > 299 {
		msg := "the webhook endpoint answered " + strconv.Itoa(status)
		details := map[string]any{"url": out.URL, "response_status": status, "response_body": answer}
		if err != nil {
			msg = "the webhook endpoint did not answer: " + err.Error()
			details["error"] = err.Error()
		}
		return TestWebhookResponse{}, &Error{Code: "WEBHOOK_DELIVERY_ERROR", Message: msg, Details: details}
	}
	return out, nil
}

// timeOrEmpty is t as the API writes times, "" for the zero time.
func timeOrEmpty(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return timestamp(t)
}
