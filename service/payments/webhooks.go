package payments

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/shared/webhooksig"
	"paywallet/shared/wire"
)

// Webhooks (DESIGN "Events"). Every change a platform hears about is
// written as an event into the outbox (store.WebhookTx) by emit, in the
// same store transaction as the change: an event exists exactly when its
// change committed. The delivery worker (webhookworker.go) sends the events
// to the platform's webhookEndpoint, in order per resource, signed with the
// service's webhook key (shared/webhooksig), and retries until it gets a
// 2xx or the retry window closes.
//
// Events are recorded only while a webhookEndpoint is configured (PATCH
// /config, or Config.WebhookURL at start); changes made while none is set
// are not announced later.

// webhooks is the Service's webhook state.
type webhooks struct {
	signer *webhooksig.Signer // the active key
	jwks   webhooksig.JWKS    // every key of the key set
	wake   chan struct{}      // a committed change emitted events

	mu       sync.Mutex
	cfgRaw   []byte // the platform_config setting last parsed
	cfgValue platformConfig
	cfgRead  time.Time // when emit last read it (real time); zero: read again
}

// configFresh is how long emit trusts the configuration it last read
// instead of reading it in each transaction. A PATCH on this instance
// takes effect at once; one on another instance within this time.
const configFresh = time.Second

// ---- the platform configuration

// configSetting holds the platform configuration as JSON (platformConfig).
// It is not secret and not sealed.
const configSetting = "platform_config"

type platformConfig struct {
	ID              string `json:"id"`
	WebhookEndpoint string `json:"webhookEndpoint,omitempty"`
	CreatedAt       string `json:"createdAt"`
	UpdatedAt       string `json:"updatedAt"`
}

// PlatformConfig is the reference's PlatformConfig, with the fields
// this service has.
type PlatformConfig struct {
	ID              string `json:"id"`
	UmaDomain       string `json:"umaDomain"`
	WebhookEndpoint string `json:"webhookEndpoint,omitempty"`
	CreatedAt       string `json:"createdAt"`
	UpdatedAt       string `json:"updatedAt"`
}

func (s *Service) configJSON(c platformConfig) PlatformConfig {
	return PlatformConfig{ID: c.ID, UmaDomain: s.cfg.UMADomain, WebhookEndpoint: c.WebhookEndpoint,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
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
		h.cfgRaw, h.cfgValue = raw, c
	}
	return h.cfgValue, nil
}

// forgetConfig makes the next emit read the configuration.
func (s *Service) forgetConfig() {
	s.hooks.mu.Lock()
	s.hooks.cfgRead = time.Time{}
	s.hooks.mu.Unlock()
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
	return read(ctx, s, func(tx store.Tx) (PlatformConfig, error) {
		c, err := s.readConfig(ctx, tx)
		if err != nil {
			return PlatformConfig{}, err
		}
		return s.configJSON(c), nil
	})
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
// webhookEndpoint is set (an absolute http(s) URL) or cleared (null or "").
// Every other field is refused, each one named. It answers the
// configuration as it is after the change.
func (s *Service) UpdateConfig(ctx context.Context, req PlatformConfigUpdate) (PlatformConfig, error) {
	if req == nil {
		return PlatformConfig{}, errorf(CodeInvalidRequestFormat, "the body must be a JSON object")
	}
	var fe fieldErrors
	var endpoint *string
	for name, v := range req {
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
	defer s.forgetConfig() // emit reads what committed
	return commit(ctx, s, "", nil, func(tx store.Tx) (PlatformConfig, error) {
		c, err := s.readConfig(ctx, tx)
		if err != nil {
			return PlatformConfig{}, err
		}
		if endpoint != nil && *endpoint != c.WebhookEndpoint {
			c.WebhookEndpoint = *endpoint
			c.UpdatedAt = timestamp(s.now())
			if err := s.writeConfig(ctx, tx, c); err != nil {
				return PlatformConfig{}, err
			}
		}
		return s.configJSON(c), nil
	})
}

// ---- the signing keys

// webhookKeysSetting holds the webhook signing keys, sealed with the
// at-rest key (label webhookKeysLabel) as one JSON document
// (webhookKeySet). Every instance signs with the same key; a later version
// can rotate by adding a key and moving Active to it (the JWKS lists every
// key, so receivers know the new one before it signs).
const webhookKeysSetting = "webhook_signing_keys"

const webhookKeysLabel = "Setting:" + webhookKeysSetting + "/keys"

type webhookKeySet struct {
	Active string          `json:"active"` // kid of the signing key
	Keys   []webhookKeyRow `json:"keys"`
}

type webhookKeyRow struct {
	Kid       string `json:"kid"`
	D         string `json:"d"` // the P-256 scalar, base64url
	CreatedAt string `json:"createdAt"`
}

// initWebhooks loads (on first start creates) the signing keys, makes sure
// the platform configuration exists, and applies Config.WebhookURL.
func (s *Service) initWebhooks(ctx context.Context) error {
	if s.cfg.WebhookURL != "" {
		if why := validWebhookURL(s.cfg.WebhookURL); why != "" {
			return fmt.Errorf("service: Config.WebhookURL %s", why)
		}
	}
	proposal, err := s.newWebhookKeySet()
	if err != nil {
		return err
	}
	now := timestamp(s.now())
	fresh, err := json.Marshal(platformConfig{ID: ids.New("PlatformConfig"), CreatedAt: now, UpdatedAt: now})
	if err != nil {
		return err
	}
	var sealed []byte
	err = s.store.Tx(ctx, func(tx store.Tx) error {
		var err error
		if sealed, err = tx.PutSettingIfAbsent(ctx, webhookKeysSetting, proposal); err != nil {
			return err
		}
		if _, err := tx.PutSettingIfAbsent(ctx, configSetting, fresh); err != nil {
			return err
		}
		if s.cfg.WebhookURL == "" {
			return nil
		}
		c, err := s.readConfig(ctx, tx)
		if err != nil || c.WebhookEndpoint == s.cfg.WebhookURL {
			return err
		}
		c.WebhookEndpoint, c.UpdatedAt = s.cfg.WebhookURL, now
		return s.writeConfig(ctx, tx, c)
	})
	if err != nil {
		return fmt.Errorf("service: load the webhook keys and configuration: %w", err)
	}
	plain, err := s.box.Open(sealed, webhookKeysLabel)
	if err != nil {
		return fmt.Errorf("service: the stored webhook keys do not open with Config.AtRestKey: %w", err)
	}
	defer clear(plain)
	var set webhookKeySet
	if err := json.Unmarshal(plain, &set); err != nil {
		return fmt.Errorf("service: the stored webhook keys are unusable: %w", err)
	}
	for _, row := range set.Keys {
		d, err := base64.RawURLEncoding.DecodeString(row.D)
		if err != nil {
			return fmt.Errorf("service: webhook key %s is unusable: %w", row.Kid, err)
		}
		k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
		clear(d)
		if err != nil {
			return fmt.Errorf("service: webhook key %s is unusable: %w", row.Kid, err)
		}
		signer, err := webhooksig.NewSigner(k)
		if err != nil {
			return err
		}
		s.hooks.jwks.Keys = append(s.hooks.jwks.Keys, signer.JWK())
		if row.Kid == set.Active {
			s.hooks.signer = signer
		}
	}
	if s.hooks.signer == nil {
		return fmt.Errorf("service: the stored webhook keys have no active key %q", set.Active)
	}
	return nil
}

// newWebhookKeySet makes a key set of one fresh key, sealed.
func (s *Service) newWebhookKeySet() ([]byte, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	d, err := k.Bytes()
	if err != nil {
		return nil, err
	}
	kid := webhooksig.KeyID(&k.PublicKey)
	plain, err := json.Marshal(webhookKeySet{Active: kid, Keys: []webhookKeyRow{{Kid: kid,
		D: base64.RawURLEncoding.EncodeToString(d), CreatedAt: timestamp(s.now())}}})
	clear(d)
	if err != nil {
		return nil, err
	}
	defer clear(plain)
	return s.box.Seal(plain, webhookKeysLabel), nil
}

// WebhookKeys is the JWKS of the webhook signing keys, public (GET
// /webhooks/jwks.json, without credentials): receivers verify deliveries
// with them.
func (s *Service) WebhookKeys() webhooksig.JWKS { return s.hooks.jwks }

// ---- recording events

// webhookEnvelope is the body of a webhook (webhooksig.Event, with data
// still a Go value).
type webhookEnvelope struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      any    `json:"data,omitempty"`
	Sequence  int64  `json:"sequence,omitempty"`
}

func encodeEnvelope(e webhookEnvelope) ([]byte, error) { return encodeJSON(e) }

// eventBody is the body of e as it is sent and signed: the stored
// envelope with "sequence" added as its last member, which is where
// encodeEnvelope puts it, so the bytes are those of encoding the whole
// envelope at once. Events recorded before the sequence was assigned by
// the store carry it already and are returned as they are.
func eventBody(e *store.WebhookEvent) []byte {
	b := e.Body
	tail := `,"sequence":` + strconv.FormatInt(e.Sequence, 10) + `}`
	if e.Sequence < 1 || len(b) < 2 || b[len(b)-1] != '}' || bytes.HasSuffix(b, []byte(tail)) {
		return b
	}
	out := make([]byte, 0, len(b)+len(tail))
	out = append(out, b[:len(b)-1]...)
	if len(b) == 2 { // {} (never recorded, but keep it JSON)
		return append(append(out, tail[1:len(tail)-1]...), '}')
	}
	return append(out, tail...)
}

// emitConfig is the configuration as emit sees it: read in tx at most
// every configFresh.
func (s *Service) emitConfig(ctx context.Context, tx store.Tx) (platformConfig, error) {
	h := &s.hooks
	h.mu.Lock()
	if !h.cfgRead.IsZero() && time.Since(h.cfgRead) < configFresh {
		c := h.cfgValue
		h.mu.Unlock()
		return c, nil
	}
	h.mu.Unlock()
	c, err := s.readConfig(ctx, tx)
	if err != nil {
		return c, err
	}
	h.mu.Lock()
	h.cfgRead = time.Now()
	h.mu.Unlock()
	return c, nil
}

// emit records an event of the resource in tx, if a webhook endpoint is
// configured. data is the resource as the API shows it after the change.
func (s *Service) emit(ctx context.Context, tx store.Tx, typ, resourceID string, data any) error {
	c, err := s.emitConfig(ctx, tx)
	if err != nil || c.WebhookEndpoint == "" {
		return err
	}
	now := s.now()
	id := ids.New("Webhook")
	// The envelope is stored without its sequence, which the store
	// assigns in the INSERT (one statement per event, not a read and a
	// write); eventBody adds it as the last member when the event is sent
	// or shown.
	body, err := encodeEnvelope(webhookEnvelope{ID: id, Type: typ, Timestamp: timestamp(now), Data: data})
	if err != nil {
		return err
	}
	e := &store.WebhookEvent{ID: id, Type: typ, ResourceID: resourceID,
		Body: body, Status: store.WebhookPending, NextAttemptAt: now, GiveUpAt: now.Add(s.cfg.WebhookRetryFor),
		CreatedAt: now, UpdatedAt: now}
	if o, ok := tx.(*outboxTx); ok {
		// Written when the operation's work is done, with the other
		// events it records, in one statement (outboxStore.run).
		o.events = append(o.events, e)
		return nil
	}
	return tx.CreateWebhookEvent(ctx, e)
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
	return s.emit(ctx, tx, transactionEventType(x), x.ID, s.transactionJSON(x))
}

// emitBalance records INTERNAL_ACCOUNT.BALANCE_UPDATED with the account as
// it is now in tx.
func (s *Service) emitBalance(ctx context.Context, tx store.Tx, accountID string) error {
	a, err := tx.GetInternalAccount(ctx, accountID)
	if err != nil {
		return err
	}
	return s.emit(ctx, tx, webhooksig.InternalAccountBalanceUpdated, a.ID, s.internalAccountJSON(a))
}

// outboxStore wakes the delivery worker after a transaction that emitted
// events committed.
type outboxStore struct {
	store.Store
	wake func()
}

// outboxTx is the store.Tx outboxStore hands to fn. emit queues its events
// here; outboxStore writes them in the same transaction once fn returned
// without an error, all in one store call (an execute records two, and
// each statement is a round trip inside the API's transaction).
type outboxTx struct {
	store.Tx
	events []*store.WebhookEvent
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
		if err := fn(last); err != nil {
			return err
		}
		switch len(last.events) {
		case 0:
			return nil
		case 1:
			return tx.CreateWebhookEvent(ctx, last.events[0])
		}
		return tx.CreateWebhookEvents(ctx, last.events)
	}
	var err error
	if key == "" {
		err = o.Store.Tx(ctx, wrapped)
	} else {
		err = o.Store.TxFor(ctx, key, wrapped)
	}
	if err == nil && last != nil && len(last.events) > 0 {
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
