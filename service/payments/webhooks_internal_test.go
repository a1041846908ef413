package payments

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"paywallet/service/store"
	"paywallet/shared/webhooksig"
)

// TestEventRollsBack: an event recorded in a transaction that then fails is
// never delivered, nor even listed.
func TestEventRollsBack(t *testing.T) {
	svc := newTestService(t)
	ctx := context.Background()
	boom := errors.New("boom")
	err := svc.store.Tx(ctx, func(tx store.Tx) error {
		if err := svc.emit(ctx, tx, webhooksig.InternalAccountStatusUpdated, "InternalAccount:x", map[string]string{"id": "InternalAccount:x"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	// Catalogued, a committed event would be listed now.
	if _, err := svc.DeliverWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	events, err := read(ctx, svc, func(tx store.Tx) (int, error) {
		page, err := tx.ListEvents(ctx, store.EventFilter{Limit: 100})
		return len(page.Items), err
	})
	if err != nil || events != 0 {
		t.Fatalf("%d events stored after the rollback (%v); want none", events, err)
	}
}

// TestPauseEvents: what changes while events are paused records none;
// after resuming, changes record theirs again.
func TestPauseEvents(t *testing.T) {
	svc := newTestService(t)
	ctx := context.Background()
	emit := func(id string) {
		t.Helper()
		err := svc.store.Tx(ctx, func(tx store.Tx) error {
			if err := svc.emitWallet(ctx, tx, &store.InternalAccount{ID: id}); err != nil {
				return err
			}
			return svc.emit(ctx, tx, webhooksig.InternalAccountStatusUpdated, id, map[string]string{"id": id})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	svc.PauseEvents(true)
	emit("InternalAccount:paused")
	svc.PauseEvents(false)
	emit("InternalAccount:resumed")
	if _, err := svc.DeliverWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := read(ctx, svc, func(tx store.Tx) ([]string, error) {
		page, err := tx.ListEvents(ctx, store.EventFilter{Limit: 100})
		var ids []string
		for _, e := range page.Items {
			ids = append(ids, e.ResourceID)
		}
		return ids, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[InternalAccount:resumed InternalAccount:resumed]" {
		t.Fatalf("events of %v; want the two of the change made after resuming", got)
	}
}

// TestWebhookKeysUpgrade: a key set stored before rotation existed (one
// P-256 key, no Ed25519 key) is rewritten once as generations: the P-256
// key keeps its kid, and every later start reads the same Ed25519 key.
func TestWebhookKeysUpgrade(t *testing.T) {
	svc := newTestService(t)
	ctx := context.Background()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := ec.Bytes()
	legacy, _ := json.Marshal(keySetDoc{Active: webhooksig.KeyID(&ec.PublicKey),
		Keys: []legacyKeyRow{{Kid: webhooksig.KeyID(&ec.PublicKey), D: base64.RawURLEncoding.EncodeToString(d), CreatedAt: "2026-01-01T00:00:00Z"}}})
	err = svc.store.Tx(ctx, func(tx store.Tx) error {
		old, err := tx.GetSetting(ctx, webhookKeysSetting)
		if err != nil {
			return err
		}
		_, err = tx.ReplaceSetting(ctx, webhookKeysSetting, old, svc.box.Seal(legacy, webhookKeysLabel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var seen []webhooksig.JWKS
	for range 2 {
		if err := svc.loadWebhookKeys(ctx); err != nil {
			t.Fatal(err)
		}
		seen = append(seen, svc.WebhookKeys())
	}
	jwks := seen[0]
	if len(jwks.Keys) != 2 || jwks.Keys[0].Kid != webhooksig.KeyID(&ec.PublicKey) || jwks.Keys[1].Kty != "OKP" {
		t.Fatalf("upgraded JWKS %+v", jwks)
	}
	if seen[1].Keys[1] != jwks.Keys[1] {
		t.Fatal("the Ed25519 key changed between two starts")
	}
}

// TestUpgradeKeepsUndelivered: a webhookEndpoint stored by a version before
// endpoints becomes the default endpoint, starting from the cursor
// migration 0017 left (the events the old outbox had not delivered),
// not from the head.
func TestUpgradeKeepsUndelivered(t *testing.T) {
	svc := newTestService(t)
	ctx := context.Background()
	err := svc.store.Tx(ctx, func(tx store.Tx) error {
		for i := range 3 {
			if err := svc.emit(ctx, tx, webhooksig.InternalAccountStatusUpdated, fmt.Sprintf("InternalAccount:%d", i), map[string]int{"n": i}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DeliverWebhooks(ctx); err != nil { // catalogues: head 3
		t.Fatal(err)
	}
	err = svc.store.Tx(ctx, func(tx store.Tx) error {
		c, err := svc.readConfig(ctx, tx)
		if err != nil {
			return err
		}
		c.WebhookEndpoint = "https://old.example/hooks"
		if err := svc.writeConfig(ctx, tx, c); err != nil {
			return err
		}
		_, err = tx.PutSettingIfAbsent(ctx, upgradeSetting, []byte("1"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.initWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := read(ctx, svc, func(tx store.Tx) (*store.WebhookEndpoint, error) { return defaultEndpoint(ctx, tx) })
	if err != nil || d == nil {
		t.Fatalf("default endpoint %+v: %v", d, err)
	}
	if d.URL != "https://old.example/hooks" || d.Cursor != 1 {
		t.Fatalf("the upgraded default endpoint: URL %q, cursor %d; want the stored URL from cursor 1", d.URL, d.Cursor)
	}
}
