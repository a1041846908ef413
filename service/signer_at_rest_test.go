package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"paywallet/service/atrest"
	"paywallet/service/mail"
	"paywallet/service/store"
	"paywallet/service/store/pgtest"
	"paywallet/service/store/sqlstore"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

// Issue 14, defect 4: the target-bundle signer key in a copy of the
// database. The test plays an attacker who holds every row of the database
// but not the at-rest key.

// atRestBackend opens a second, third, … handle on one database, as separate
// instances (or a restarted one) would.
type atRestBackend struct {
	name string
	open func(t *testing.T) func(t *testing.T) store.Store
}

var atRestBackends = []atRestBackend{
	{"sqlite", func(t *testing.T) func(t *testing.T) store.Store {
		path := filepath.Join(t.TempDir(), "paywallet.db")
		return func(t *testing.T) store.Store {
			st, err := sqlstore.OpenSQLite(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}
	}},
	{"postgres", func(t *testing.T) func(t *testing.T) store.Store {
		url := pgtest.Start(t).NewDatabase(t)
		return func(t *testing.T) store.Store {
			st, err := sqlstore.OpenPostgres(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}
	}},
}

func withAtRestStore(st store.Store) func(*Config) { return func(c *Config) { c.Store = st } }

// TestSignerKeySealedAtRest: the settings row of the target-bundle signer
// key must not hold the key, neither on a fresh database nor on one an
// older version wrote the raw key to; the older database keeps its pinned
// key, also when several instances start on it at once, and the service
// still signs target and export bundles that verify against it.
func TestSignerKeySealedAtRest(t *testing.T) {
	for _, b := range atRestBackends {
		t.Run(b.name+"/fresh", func(t *testing.T) {
			open := b.open(t)
			e := newEnv(t, withAtRestStore(open(t)))
			pinned := e.svc.SignerPublicKey()
			assertSignerRowSealed(t, e.store, pinned)
			e.assertSigns(pinned)

			again := newEnv(t, withAtRestStore(open(t)))
			if !again.svc.SignerPublicKey().Equal(pinned) {
				t.Fatal("a restart changed the pinned signer key")
			}
			again.assertSigns(pinned)
		})
		t.Run(b.name+"/raw key of an older version", func(t *testing.T) {
			open := b.open(t)
			seed := open(t)
			raw := mustKey(t)
			pinned := raw.PublicKey()
			// What the older version wrote on first start.
			err := seed.Tx(t.Context(), func(tx store.Tx) error {
				_, err := tx.PutSettingIfAbsent(t.Context(), signerSetting, raw.Bytes())
				return err
			})
			if err != nil {
				t.Fatal(err)
			}

			// Several instances upgrade at once, each with its own
			// connection to the database.
			const instances = 4
			stores := make([]store.Store, instances)
			for i := range stores {
				stores[i] = open(t)
			}
			svcs := make([]*Service, instances)
			errs := make([]error, instances)
			var wg sync.WaitGroup
			for i := range instances {
				wg.Go(func() {
					svcs[i], errs[i] = New(context.Background(), Config{
						Store: stores[i], Mailer: &mail.Mailbox{}, PlatformCredential: testCredential,
						AtRestKey: testAtRestKey, WebAuthnRPID: testRPID, WebAuthnOrigins: []string{testOrigin},
					})
				})
			}
			wg.Wait()
			for i := range instances {
				if errs[i] != nil {
					t.Fatalf("instance %d: %v", i, errs[i])
				}
				if !svcs[i].SignerPublicKey().Equal(pinned) {
					t.Fatalf("instance %d pins %s, want the existing %s", i, svcs[i].SignerPublicKey(), pinned)
				}
			}
			assertSignerRowSealed(t, seed, pinned)

			e := newEnv(t, withAtRestStore(open(t)))
			if !e.svc.SignerPublicKey().Equal(pinned) {
				t.Fatalf("after the upgrade the service pins %s, want the existing %s", e.svc.SignerPublicKey(), pinned)
			}
			e.assertSigns(pinned)
			assertSignerRowSealed(t, seed, pinned)

			// Another at-rest key cannot open it: the service refuses to
			// start rather than sign with some other key.
			_, err = New(context.Background(), Config{
				Store: open(t), Mailer: &mail.Mailbox{}, PlatformCredential: testCredential,
				AtRestKey: []byte("another at-rest key, 32 bytes..."), WebAuthnRPID: testRPID, WebAuthnOrigins: []string{testOrigin},
			})
			if !errors.Is(err, atrest.ErrOpen) {
				t.Fatalf("start with another at-rest key: %v", err)
			}
			assertSignerRowSealed(t, seed, pinned)
		})
	}
}

// assertSignerRowSealed scans every 32-byte window of the stored signer
// setting for a P-256 scalar whose public key is the pinned one.
func assertSignerRowSealed(t *testing.T, st store.Store, pinned *walletcrypto.PublicKey) {
	t.Helper()
	var v []byte
	err := st.Tx(t.Context(), func(tx store.Tx) error {
		var err error
		v, err = tx.GetSetting(t.Context(), signerSetting)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(v) < 32 {
		t.Fatalf("signer setting is %d bytes", len(v))
	}
	for off := 0; off+32 <= len(v); off++ {
		k, err := walletcrypto.NewPrivateKey(v[off : off+32])
		if err != nil {
			continue
		}
		if k.PublicKey().Equal(pinned) {
			t.Fatalf("the settings row (%d bytes) holds the signer private key in the clear at offset %d", len(v), off)
		}
	}
}

// assertSigns checks that a target bundle and an export bundle of this
// service verify against pinned, through a full login and export.
var signerWallets atomic.Int64

func (e *env) assertSigns(pinned *walletcrypto.PublicKey) {
	t := e.t
	t.Helper()
	// A number, not the env's address: a second env on the same database
	// may be allocated where a dead first one was, and the customer's
	// e-mail would then be taken (409).
	w := e.newWallet(fmt.Sprintf("signer-%d@example.com", signerWallets.Add(1)))
	am, _ := e.challenge(w)
	if _, err := walletcrypto.VerifyTargetBundle(am.OTPEncryptionTargetBundle, pinned); err != nil {
		t.Fatalf("target bundle does not verify against the pinned key: %v", err)
	}
	e.clock.Advance(e.cfg.OTPResendInterval)
	k := mustKey(t)
	e.login(w, k)
	path := "/internal-accounts/" + w.account.ID + "/export"
	target := mustKey(t)
	body := map[string]any{"clientPublicKey": target.PublicKey().UncompressedHex()}
	ch := e.firstLeg("POST", path, body)
	r := e.do("POST", path, body, signed(mustStamp(t, k, ch.PayloadToSign), ch.RequestID))
	e.mustStatus(r, http.StatusOK)
	var out wire.ExportResponse
	r.decode(t, &out)
	if _, _, err := walletcrypto.OpenExportBundle(out.EncryptedWalletCredentials, pinned, target); err != nil {
		t.Fatalf("export bundle does not verify against the pinned key: %v", err)
	}
}
