package payments

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"paywallet/service/store"
	"paywallet/shared/webhooksig"
	"paywallet/shared/wire"
)

// The webhook signing keys. A generation is one P-256 key (the
// X-Service-Signature and Service-Webhook-Signature headers, and the
// ledger head's JWS) and one Ed25519 key (the Standard Webhooks
// webhook-signature header). Every instance of a database signs with the
// same generations, kept sealed with the at-rest key in one setting.
//
// Rotation (POST /webhooks/keys/rotate) adds a generation and gives every
// generation that signed until then a retirement time,
// Config.WebhookKeyOverlap away. Until then each delivery carries a
// signature by every signing generation, so a receiver that knows either
// key accepts it; the oldest signing generation stays the primary (the
// one X-Service-Signature and the ledger head use). A retired generation
// signs nothing more but stays in the JWKS, so that what it signed (a
// ledger head) can still be checked.

// webhookKeysSetting holds the key set, sealed with the at-rest key
// (label webhookKeysLabel), as a keySetDoc.
const webhookKeysSetting = "webhook_signing_keys"

const webhookKeysLabel = "Setting:" + webhookKeysSetting + "/keys"

// keysFresh is how long an instance trusts the key set it last read: a
// rotation on another instance signs here within this time.
const keysFresh = time.Second

// keySetDoc is the stored key set.
type keySetDoc struct {
	Generations []generationRow `json:"generations"`
	// Active and Keys are the format of before rotation (one P-256 key,
	// no Ed25519 key): read once, then rewritten as Generations.
	Active string         `json:"active,omitempty"`
	Keys   []legacyKeyRow `json:"keys,omitempty"`
}

type generationRow struct {
	Kid       string `json:"kid"`
	Key       string `json:"key"` // webhooksig.Generation.MarshalPrivate, base64url
	CreatedAt string `json:"createdAt"`
	RetiresAt string `json:"retiresAt,omitempty"`
}

type legacyKeyRow struct {
	Kid       string `json:"kid"`
	D         string `json:"d"` // the P-256 scalar, base64url
	CreatedAt string `json:"createdAt"`
}

// generation is a stored generation, opened.
type generation struct {
	gen       *webhooksig.Generation
	createdAt time.Time
	retiresAt time.Time // zero: signs until a rotation
}

func (g *generation) signing(now time.Time) bool {
	return g.retiresAt.IsZero() || now.Before(g.retiresAt)
}

// keyState is the key set as this instance last read it.
type keyState struct {
	mu     sync.Mutex
	sealed []byte // the setting's value last opened
	gens   []generation
	read   time.Time // when it was read (real time)
	keys   *webhooksig.Keys
	// signingAt names the generations keys signs with, to rebuild it
	// when one retires.
	signingAt string
}

// loadWebhookKeys loads the key set, creating it on the first start and
// rewriting the format of before rotation.
func (s *Service) loadWebhookKeys(ctx context.Context) error {
	proposal, err := s.sealKeys(nil, s.now())
	if err != nil {
		return err
	}
	err = s.store.Tx(ctx, func(tx store.Tx) error {
		sealed, err := tx.PutSettingIfAbsent(ctx, webhookKeysSetting, proposal)
		if err != nil {
			return err
		}
		doc, err := s.openKeys(sealed)
		if err != nil {
			return err
		}
		if len(doc.Keys) == 0 {
			return nil
		}
		gens, err := upgradeKeys(doc)
		if err != nil {
			return err
		}
		fresh, err := s.sealGenerations(gens)
		if err != nil {
			return err
		}
		won, err := tx.ReplaceSetting(ctx, webhookKeysSetting, sealed, fresh)
		if err == nil && !won {
			err = errors.New("service: the webhook keys changed while they were upgraded")
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("service: load the webhook keys: %w", err)
	}
	_, err = s.webhookKeys(ctx, true)
	return err
}

// upgradeKeys turns the format of before rotation into generations: each
// P-256 key keeps its kid and gets an Ed25519 key; the active one signs,
// the others are retired.
func upgradeKeys(doc keySetDoc) ([]generation, error) {
	var out []generation
	for _, row := range doc.Keys {
		d, err := base64.RawURLEncoding.DecodeString(row.D)
		if err != nil {
			return nil, fmt.Errorf("service: webhook key %s is unusable: %w", row.Kid, err)
		}
		ec, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
		clear(d)
		if err != nil {
			return nil, fmt.Errorf("service: webhook key %s is unusable: %w", row.Kid, err)
		}
		_, ed, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		g, err := webhooksig.NewGeneration(ec, ed)
		if err != nil {
			return nil, err
		}
		created, _ := time.Parse(time.RFC3339Nano, row.CreatedAt)
		gen := generation{gen: g, createdAt: created}
		if row.Kid != doc.Active {
			gen.retiresAt = created
		}
		out = append(out, gen)
	}
	return out, nil
}

// openKeys opens the sealed setting.
func (s *Service) openKeys(sealed []byte) (keySetDoc, error) {
	plain, err := s.box.Open(sealed, webhookKeysLabel)
	if err != nil {
		return keySetDoc{}, fmt.Errorf("service: the stored webhook keys do not open with Config.AtRestKey: %w", err)
	}
	defer clear(plain)
	var doc keySetDoc
	if err := json.Unmarshal(plain, &doc); err != nil {
		return keySetDoc{}, fmt.Errorf("service: the stored webhook keys are unusable: %w", err)
	}
	return doc, nil
}

// parseGenerations opens the generations of a stored key set.
func parseGenerations(doc keySetDoc) ([]generation, error) {
	var out []generation
	for _, row := range doc.Generations {
		b, err := base64.RawURLEncoding.DecodeString(row.Key)
		if err != nil {
			return nil, fmt.Errorf("service: webhook key %s is unusable: %w", row.Kid, err)
		}
		g, err := webhooksig.ParseGeneration(b)
		clear(b)
		if err != nil {
			return nil, fmt.Errorf("service: webhook key %s is unusable: %w", row.Kid, err)
		}
		gen := generation{gen: g}
		gen.createdAt, _ = time.Parse(time.RFC3339Nano, row.CreatedAt)
		if row.RetiresAt != "" {
			if gen.retiresAt, err = time.Parse(time.RFC3339Nano, row.RetiresAt); err != nil {
				return nil, fmt.Errorf("service: webhook key %s has a bad retirement time: %w", row.Kid, err)
			}
		}
		out = append(out, gen)
	}
	return out, nil
}

// sealKeys seals gens followed by a fresh generation created at now.
func (s *Service) sealKeys(gens []generation, now time.Time) ([]byte, error) {
	g, err := webhooksig.GenerateGeneration()
	if err != nil {
		return nil, err
	}
	return s.sealGenerations(append(slices.Clone(gens), generation{gen: g, createdAt: now}))
}

func (s *Service) sealGenerations(gens []generation) ([]byte, error) {
	doc := keySetDoc{Generations: make([]generationRow, 0, len(gens))}
	for _, g := range gens {
		b, err := g.gen.MarshalPrivate()
		if err != nil {
			return nil, err
		}
		row := generationRow{Kid: g.gen.KeyID(), Key: base64.RawURLEncoding.EncodeToString(b), CreatedAt: timestamp(g.createdAt)}
		clear(b)
		if !g.retiresAt.IsZero() {
			row.RetiresAt = timestamp(g.retiresAt)
		}
		doc.Generations = append(doc.Generations, row)
	}
	plain, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	defer clear(plain)
	return s.box.Seal(plain, webhookKeysLabel), nil
}

// webhookKeys is the key set to sign with now: the one last read, read
// again from the store when it is older than keysFresh (or always, with
// force), and rebuilt when a generation retired meanwhile.
func (s *Service) webhookKeys(ctx context.Context, force bool) (*webhooksig.Keys, error) {
	k := &s.hooks.keys
	k.mu.Lock()
	stale := force || k.keys == nil || time.Since(k.read) >= keysFresh
	k.mu.Unlock()
	if stale {
		var sealed []byte
		err := s.store.Tx(ctx, func(tx store.Tx) error {
			var err error
			sealed, err = tx.GetSetting(ctx, webhookKeysSetting)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("service: read the webhook keys: %w", err)
		}
		if err := s.adoptKeys(sealed); err != nil {
			return nil, err
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.current(s.now())
}

// adoptKeys makes sealed the key set of this instance, opening it only
// when it changed.
func (s *Service) adoptKeys(sealed []byte) error {
	k := &s.hooks.keys
	k.mu.Lock()
	same := bytes.Equal(sealed, k.sealed)
	k.mu.Unlock()
	var gens []generation
	if !same {
		doc, err := s.openKeys(sealed)
		if err != nil {
			return err
		}
		if gens, err = parseGenerations(doc); err != nil {
			return err
		}
		if len(gens) == 0 {
			return errors.New("service: the stored webhook key set has no key")
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if !same {
		k.sealed, k.gens, k.keys, k.signingAt = sealed, gens, nil, ""
	}
	k.read = time.Now()
	return nil
}

// current builds the Keys for now (k.mu held).
func (k *keyState) current(now time.Time) (*webhooksig.Keys, error) {
	var signing, published []*webhooksig.Generation
	var names []string
	for i := range k.gens {
		if k.gens[i].signing(now) {
			signing = append(signing, k.gens[i].gen)
			names = append(names, k.gens[i].gen.KeyID())
		} else {
			published = append(published, k.gens[i].gen)
		}
	}
	if len(signing) == 0 {
		// Every generation retired (a rotation's new one is never
		// retired): sign with the newest rather than not at all.
		last := k.gens[len(k.gens)-1].gen
		signing, published, names = []*webhooksig.Generation{last}, published[:len(published)-1], []string{last.KeyID()}
	}
	at := strings.Join(names, ",")
	if k.keys != nil && k.signingAt == at {
		return k.keys, nil
	}
	keys, err := webhooksig.NewKeys(signing, published)
	if err != nil {
		return nil, err
	}
	k.keys, k.signingAt = keys, at
	return keys, nil
}

// WebhookKeys is the JWKS of the webhook signing keys, public (GET
// /webhooks/jwks.json, without credentials): receivers verify deliveries
// with them. A generation's two keys (EC P-256 and OKP Ed25519) share a
// line; a retired generation stays listed.
func (s *Service) WebhookKeys() webhooksig.JWKS {
	keys, err := s.webhookKeys(context.Background(), false)
	if err != nil {
		// The last set read (there is one: New read it).
		s.log.Error("webhook keys not read again", "err", err)
		k := &s.hooks.keys
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.keys != nil {
			return k.keys.JWKS()
		}
		return webhooksig.JWKS{}
	}
	return keys.JWKS()
}

// signDelivery sets the five signature headers of a delivery of body, the
// event id.
func (s *Service) signDelivery(ctx context.Context, h http.Header, id string, body []byte) error {
	return s.signShared(ctx, h, nil, "", id, body)
}

// signShared is signDelivery for a delivery of a worker round to an
// endpoint of the given payload style: the round's endpoints share the
// headers through sigs (nil: signed for this delivery alone).
func (s *Service) signShared(ctx context.Context, h http.Header, sigs *roundSignatures, payload, id string, body []byte) error {
	keys, err := s.webhookKeys(ctx, false)
	if err != nil {
		return err
	}
	now := s.now()
	sign := func() (webhooksig.Headers, error) {
		s.metrics.signed()
		return keys.Sign(id, body, now)
	}
	var sig webhooksig.Headers
	if sigs == nil {
		sig, err = sign()
	} else {
		sig, err = sigs.get(roundSigKey{keys: keys, eventID: id, payload: payload, unix: now.Unix()}, sign)
	}
	if err != nil {
		return err
	}
	sig.Set(h)
	return nil
}

// roundSignatures lets the endpoints of one worker round share each
// delivery's signatures. What the three cover is the body, and for the
// two replay-safe ones the event id and the timestamp in whole seconds;
// each is deterministic (RFC 6979 ECDSA, Ed25519). Endpoints that get the
// same body of an event in the same second therefore carry byte-identical
// headers whether they are signed once or once each: they are signed
// once, and a platform with several endpoints pays the signatures (about
// 100 µs of CPU on the two-core bench machine, most of a delivery's cost)
// once per event rather than once per endpoint. The body is a function of
// the event and the endpoint's payload style, which the key names. A
// round lasts seconds and holds at most webhookRun events per endpoint.
type roundSignatures struct {
	mu   sync.Mutex
	sigs map[roundSigKey]*roundSig
}

type roundSigKey struct {
	keys    *webhooksig.Keys // a rotation step between two deliveries signs anew
	eventID string
	payload string
	unix    int64
}

// roundSig is one set of headers, signed by the first delivery that
// needs it while the others wait for it.
type roundSig struct {
	once sync.Once
	h    webhooksig.Headers
	err  error
}

func (r *roundSignatures) get(k roundSigKey, sign func() (webhooksig.Headers, error)) (webhooksig.Headers, error) {
	r.mu.Lock()
	if r.sigs == nil {
		r.sigs = map[roundSigKey]*roundSig{}
	}
	e, ok := r.sigs[k]
	if !ok {
		e = &roundSig{}
		r.sigs[k] = e
	}
	r.mu.Unlock()
	e.once.Do(func() { e.h, e.err = sign() })
	return e.h, e.err
}

// ---- the operations

// WebhookKey is a signing key generation as GET /webhooks/keys shows it.
type WebhookKey struct {
	Kid        string `json:"kid"`        // the P-256 key's, in the JWKS and Service-Webhook-Signature
	Ed25519Kid string `json:"ed25519Kid"` // the OKP key's, in the JWKS
	// PublicKey is the Ed25519 key in the Standard Webhooks form, for
	// that spec's libraries.
	PublicKey string `json:"publicKey"`
	Status    string `json:"status"` // SIGNING, RETIRING (signs until retiresAt) or RETIRED
	Primary   bool   `json:"primary"`
	CreatedAt string `json:"createdAt"`
	RetiresAt string `json:"retiresAt,omitempty"`
}

// Key states as WebhookKey.Status says them.
const (
	keySigning  = "SIGNING"
	keyRetiring = "RETIRING"
	keyRetired  = "RETIRED"
)

func keysJSON(gens []generation, primary string, now time.Time) wire.List[WebhookKey] {
	out := wire.List[WebhookKey]{Data: make([]WebhookKey, 0, len(gens)), TotalCount: new(int)}
	for _, g := range gens {
		k := WebhookKey{Kid: g.gen.KeyID(), Ed25519Kid: g.gen.Ed25519KeyID(), PublicKey: g.gen.PublicKey(),
			Status: keySigning, Primary: g.gen.KeyID() == primary, CreatedAt: timestamp(g.createdAt),
			RetiresAt: timeOrEmpty(g.retiresAt)}
		switch {
		case !g.retiresAt.IsZero() && !now.Before(g.retiresAt):
			k.Status = keyRetired
		case !g.retiresAt.IsZero():
			k.Status = keyRetiring
		}
		out.Data = append(out.Data, k)
	}
	*out.TotalCount = len(out.Data)
	return out
}

// ListWebhookKeys is every key generation, oldest first (GET
// /webhooks/keys).
func (s *Service) ListWebhookKeys(ctx context.Context) (wire.List[WebhookKey], error) {
	keys, err := s.webhookKeys(ctx, true)
	if err != nil {
		return wire.List[WebhookKey]{}, err
	}
	k := &s.hooks.keys
	k.mu.Lock()
	defer k.mu.Unlock()
	return keysJSON(k.gens, keys.Primary().KeyID(), s.now()), nil
}

// maxRetiring bounds the generations that sign at once (the headers grow
// with each).
const maxRetiring = 3

// RotateWebhookKeys adds a key generation and retires every generation
// that signs now after Config.WebhookKeyOverlap (POST
// /webhooks/keys/rotate). Deliveries are signed with both meanwhile. A
// fourth rotation within one overlap is refused (409): wait until the
// oldest retires.
func (s *Service) RotateWebhookKeys(ctx context.Context) (wire.List[WebhookKey], error) {
	var sealed []byte
	var list wire.List[WebhookKey]
	_, err := commit(ctx, s, "", nil, func(tx store.Tx) (struct{}, error) {
		old, err := tx.GetSetting(ctx, webhookKeysSetting)
		if err != nil {
			return struct{}{}, err
		}
		doc, err := s.openKeys(old)
		if err != nil {
			return struct{}{}, err
		}
		gens, err := parseGenerations(doc)
		if err != nil {
			return struct{}{}, err
		}
		now := s.now()
		signing := 0
		for i := range gens {
			if !gens[i].signing(now) {
				continue
			}
			signing++
			if gens[i].retiresAt.IsZero() {
				gens[i].retiresAt = now.Add(s.cfg.WebhookKeyOverlap)
			}
		}
		if signing > maxRetiring {
			return struct{}{}, errorf(CodeConflict, fmt.Sprintf(
				"%d key generations sign already; rotate again once the oldest retires", signing))
		}
		if sealed, err = s.sealKeys(gens, now); err != nil {
			return struct{}{}, err
		}
		won, err := tx.ReplaceSetting(ctx, webhookKeysSetting, old, sealed)
		if err != nil {
			return struct{}{}, err
		}
		if !won {
			return struct{}{}, errorf(CodeConflict, "the webhook keys changed while they were rotated; send the request again")
		}
		return struct{}{}, nil
	})
	if err != nil {
		return list, err
	}
	if err := s.adoptKeys(sealed); err != nil {
		return list, err
	}
	return s.ListWebhookKeys(ctx)
}
