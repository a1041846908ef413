package payments

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"

	"paywallet/service/store"
	"paywallet/shared/webhooksig"
)

// keyState is the webhook signing keys as this instance uses them.
type keyState struct {
	signer *webhooksig.Signer // the active key
	jwks   webhooksig.JWKS    // every key of the key set
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

// loadWebhookKeys loads (on first start creates) the signing keys.
func (s *Service) loadWebhookKeys(ctx context.Context) error {
	proposal, err := s.newWebhookKeySet()
	if err != nil {
		return err
	}
	var sealed []byte
	err = s.store.Tx(ctx, func(tx store.Tx) error {
		var err error
		if sealed, err = tx.PutSettingIfAbsent(ctx, webhookKeysSetting, proposal); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("service: load the webhook keys: %w", err)
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
		s.hooks.keys.jwks.Keys = append(s.hooks.keys.jwks.Keys, signer.JWK())
		if row.Kid == set.Active {
			s.hooks.keys.signer = signer
		}
	}
	if s.hooks.keys.signer == nil {
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
func (s *Service) WebhookKeys() webhooksig.JWKS { return s.hooks.keys.jwks }

// signDelivery sets the signature headers of a delivery of body, the
// event id.
func (s *Service) signDelivery(h http.Header, id string, body []byte) error {
	sig, err := s.hooks.keys.signer.Sign(id, body, s.now())
	if err != nil {
		return err
	}
	h.Set(webhooksig.CompatHeader, sig.Compat)
	h.Set(webhooksig.Header, sig.Signature)
	return nil
}
