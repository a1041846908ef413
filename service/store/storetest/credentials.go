package storetest

import (
	"bytes"
	"errors"
	"sync"
	"time"

	"paywallet/service/store"
)

// testCredentialUpdates covers renaming (with the EMAIL_OTP e-mail rule)
// and the passkey record and counter written after a login.
func testCredentialUpdates(f *fixture) {
	_, a, email := f.world()
	_, _, other := f.world()
	passkey := newCredential(a.ID, "PASSKEY", "Laptop")
	f.tx(func(tx store.Tx) error { return tx.CreateCredential(f.ctx, passkey) })

	f.tx(func(tx store.Tx) error {
		if err := tx.SetCredentialNickname(f.ctx, email.ID, "new-"+email.Nickname, at(time.Minute)); err != nil {
			return err
		}
		if err := tx.UpdatePasskey(f.ctx, passkey.ID, []byte(`{"v":2}`), 42, at(2*time.Minute)); err != nil {
			return err
		}
		got, err := tx.GetCredential(f.ctx, email.ID)
		if err != nil {
			return err
		}
		if got.Nickname != "new-"+email.Nickname || !got.UpdatedAt.Equal(at(time.Minute)) {
			f.Errorf("renamed credential: %+v", got)
		}
		got, err = tx.GetPasskey(f.ctx, passkey.CredentialID)
		if err != nil {
			return err
		}
		if got.ID != passkey.ID {
			f.Errorf("GetPasskey found %s, want %s", got.ID, passkey.ID)
		}
		if string(got.Passkey) != `{"v":2}` || got.SignCount != 42 || !got.UpdatedAt.Equal(at(2*time.Minute)) {
			f.Errorf("updated passkey: %+v", got)
		}
		return nil
	})

	err := f.s.Tx(f.ctx, func(tx store.Tx) error {
		return tx.SetCredentialNickname(f.ctx, email.ID, upperASCII(other.Nickname), at(3*time.Minute))
	})
	wantErr(f, "renaming to another account's e-mail", err, store.ErrConflict)
	err = f.s.Tx(f.ctx, func(tx store.Tx) error {
		return tx.SetCredentialNickname(f.ctx, newID("AuthMethod"), "x@example.com", at(3*time.Minute))
	})
	wantErr(f, "renaming an unknown credential", err, store.ErrNotFound)
	err = f.s.Tx(f.ctx, func(tx store.Tx) error {
		return tx.UpdatePasskey(f.ctx, email.ID, []byte(`{}`), 1, at(3*time.Minute))
	})
	wantErr(f, "UpdatePasskey of an EMAIL_OTP credential", err, store.ErrNotFound)
	err = f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, err := tx.GetPasskey(f.ctx, "no-such-passkey")
		return err
	})
	wantErr(f, "GetPasskey of an unknown id", err, store.ErrNotFound)
}

// testDeleteCredential checks that a credential goes with its OTPs and
// sessions and nothing else of the account.
func testDeleteCredential(f *fixture) {
	_, a, email := f.world()
	passkey := newCredential(a.ID, "PASSKEY", "Phone")
	keep := newSession(a.ID, email.ID, at(time.Hour))
	gone := newSession(a.ID, passkey.ID, at(time.Hour))
	f.tx(func(tx store.Tx) error {
		if err := tx.CreateCredential(f.ctx, passkey); err != nil {
			return err
		}
		for _, s := range []*store.Session{keep, gone} {
			if err := tx.CreateSession(f.ctx, s); err != nil {
				return err
			}
		}
		return tx.CreateOTP(f.ctx, newOTP(email.ID, at(time.Second)))
	})
	f.tx(func(tx store.Tx) error { return tx.DeleteCredential(f.ctx, passkey.ID) })
	f.tx(func(tx store.Tx) error {
		if _, err := tx.GetCredential(f.ctx, passkey.ID); !isNotFound(err) {
			f.Errorf("deleted credential: %v", err)
		}
		if _, err := tx.GetSession(f.ctx, gone.ID); !isNotFound(err) {
			f.Errorf("session of the deleted credential: %v", err)
		}
		if _, err := tx.GetSession(f.ctx, keep.ID); err != nil {
			f.Errorf("session of another credential: %v", err)
		}
		return nil
	})
	// The e-mail credential has an OTP: it goes too.
	f.tx(func(tx store.Tx) error { return tx.DeleteCredential(f.ctx, email.ID) })
	f.tx(func(tx store.Tx) error {
		if _, err := tx.LatestOTP(f.ctx, email.ID); !isNotFound(err) {
			f.Errorf("OTP of the deleted credential: %v", err)
		}
		list, err := tx.ListCredentials(f.ctx, a.ID)
		if err != nil || len(list) != 0 {
			f.Errorf("credentials left: %v %v", list, err)
		}
		// An e-mail credential may be made again once the old one is gone.
		return tx.CreateCredential(f.ctx, newCredential(a.ID, "EMAIL_OTP", email.Nickname))
	})
	err := f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.DeleteCredential(f.ctx, passkey.ID) })
	wantErr(f, "deleting twice", err, store.ErrNotFound)
}

// testRegistrationChallenge races several callers on one challenge: exactly
// one wins, and a rolled-back use does not count.
func testRegistrationChallenge(f *fixture) {
	h := bytes.Repeat([]byte{0x5a}, 32)
	h[0] = byte(idSeq.Add(1))
	var wg sync.WaitGroup
	wins := make(chan bool, 8)
	for range 8 {
		wg.Go(func() {
			var won bool
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				var err error
				won, err = tx.UseRegistrationChallenge(f.ctx, h, at(time.Second))
				return err
			})
			if err != nil {
				f.Errorf("UseRegistrationChallenge: %v", err)
			}
			wins <- won
		})
	}
	wg.Wait()
	close(wins)
	n := 0
	for w := range wins {
		if w {
			n++
		}
	}
	if n != 1 {
		f.Errorf("%d callers won one registration challenge, want 1", n)
	}

	h2 := append([]byte{0x01}, h[1:]...)
	h2[1] ^= 0xff
	_ = f.s.Tx(f.ctx, func(tx store.Tx) error {
		if _, err := tx.UseRegistrationChallenge(f.ctx, h2, at(time.Second)); err != nil {
			return err
		}
		return errRollback
	})
	f.tx(func(tx store.Tx) error {
		won, err := tx.UseRegistrationChallenge(f.ctx, h2, at(time.Second))
		if err == nil && !won {
			f.Errorf("a rolled-back use was kept")
		}
		return err
	})
}

// testAccountAndCustomerUpdates covers privateEnabled, the write-once
// wallet secret and the customer fields PATCH changes.
func testAccountAndCustomerUpdates(f *fixture) {
	c, a, _ := f.world()
	f.tx(func(tx store.Tx) error {
		if err := tx.SetPrivateEnabled(f.ctx, a.ID, false, at(time.Minute)); err != nil {
			return err
		}
		won, err := tx.SetWalletSecret(f.ctx, a.ID, []byte{1, 2, 3})
		if err != nil || !won {
			f.Errorf("first SetWalletSecret: %v %v", won, err)
		}
		won, err = tx.SetWalletSecret(f.ctx, a.ID, []byte{9})
		if err != nil || won {
			f.Errorf("second SetWalletSecret: %v %v", won, err)
		}
		got, err := tx.GetInternalAccount(f.ctx, a.ID)
		if err != nil {
			return err
		}
		if got.PrivateEnabled || !bytes.Equal(got.WalletSecret, []byte{1, 2, 3}) || !got.UpdatedAt.Equal(at(time.Minute)) {
			f.Errorf("updated account: %+v", got)
		}

		c.Email, c.FullName, c.UmaAddress, c.UpdatedAt = "changed@example.com", "Ana Diaz", "$ana@uma.example", at(2*time.Minute)
		if err := tx.UpdateCustomer(f.ctx, c); err != nil {
			return err
		}
		gotC, err := tx.GetCustomer(f.ctx, c.ID)
		if err != nil {
			return err
		}
		same(f, "updated customer", *gotC, *c)
		return nil
	})
	err := f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.SetPrivateEnabled(f.ctx, newID("InternalAccount"), true, at(0)) })
	wantErr(f, "SetPrivateEnabled of an unknown account", err, store.ErrNotFound)
	err = f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, err := tx.SetWalletSecret(f.ctx, newID("InternalAccount"), []byte{1})
		return err
	})
	wantErr(f, "SetWalletSecret of an unknown account", err, store.ErrNotFound)
	unknown := newCustomer()
	err = f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.UpdateCustomer(f.ctx, unknown) })
	wantErr(f, "UpdateCustomer of an unknown customer", err, store.ErrNotFound)
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

var errRollback = errors.New("storetest: roll back")

// testLatestChallenge picks the newest challenge of one operation on one
// target, whatever other operations and targets hold.
func testLatestChallenge(f *fixture) {
	_, a, cred := f.world()
	mk := func(op, target string, created time.Duration) *store.Challenge {
		c := newChallenge(a.ID)
		c.Operation, c.TargetID, c.CreatedAt = op, target, at(created)
		f.tx(func(tx store.Tx) error { return tx.CreateChallenge(f.ctx, c) })
		return c
	}
	mk("passkey.login", cred.ID, time.Second)
	newest := mk("passkey.login", cred.ID, 3*time.Second)
	mk("passkey.login", cred.ID, 2*time.Second)
	mk("other", cred.ID, 9*time.Second)
	mk("passkey.login", newID("AuthMethod"), 9*time.Second)
	f.tx(func(tx store.Tx) error {
		got, err := tx.LatestChallenge(f.ctx, "passkey.login", cred.ID)
		if err != nil {
			return err
		}
		if got.ID != newest.ID {
			f.Errorf("LatestChallenge = %s, want %s", got.ID, newest.ID)
		}
		if _, err := tx.LatestChallenge(f.ctx, "passkey.login", newID("AuthMethod")); !isNotFound(err) {
			f.Errorf("LatestChallenge of a target without challenges: %v", err)
		}
		return nil
	})
}
