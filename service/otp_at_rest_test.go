package service

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"hash"
	"net/http"
	"sync"
	"testing"

	"paywallet/service/store"
	"paywallet/shared/wire"
)

// Issue 14, defect 1: what a copy of the otps table gives away. The test
// plays an attacker who holds every row of the database but not the at-rest
// key.

// TestOTPCodeNotRecoverableFromDatabase issues a code through the real
// challenge endpoint, reads its row back, and searches all 10^6 codes with
// every construction the row alone lets one compute: the old unkeyed SHA-256,
// and HMAC-SHA-256 under every key one could take from the database. None may
// find the code. As a control, the stored hash is the searched HMAC
// construction under the key derived from the at-rest key (which is not in
// the database), so the searches are not vacuous. The right code still logs
// in and a wrong one is refused. The hash is made by the service, not the
// store, so one back end (SQLite) is enough.
func TestOTPCodeNotRecoverableFromDatabase(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("otp-at-rest@example.com")
	am, code := e.challenge(w)

	var row *store.OTP
	var signerRow []byte
	err := e.store.Tx(t.Context(), func(tx store.Tx) error {
		var err error
		if row, err = tx.LatestOTP(t.Context(), w.credential.ID); err != nil {
			return err
		}
		signerRow, err = tx.GetSetting(t.Context(), signerSetting)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if row.CredentialID != w.credential.ID || len(row.CodeHash) == 0 {
		t.Fatalf("row %+v", row)
	}

	// Everything in the database that could serve as a key.
	guessable := map[string][]byte{
		"the empty key":         {},
		"the OTP id":            []byte(row.ID),
		"the credential id":     []byte(row.CredentialID),
		"the e-mail address":    []byte(w.email),
		"the sealed target key": row.TargetPrivateKey,
		"the signer setting":    signerRow,
	}
	var searches []codeSearch
	searches = append(searches,
		codeSearch{"SHA-256(otp id, code)", sha256.New(), row.ID + "\x00"},
		codeSearch{"SHA-256(otp id, credential id, code)", sha256.New(), row.ID + "\x00" + row.CredentialID + "\x00"},
	)
	for name, key := range guessable {
		searches = append(searches,
			codeSearch{"HMAC-SHA-256 under " + name, hmac.New(sha256.New, key), row.ID + "\x00" + row.CredentialID + "\x00"},
		)
	}
	var wg sync.WaitGroup
	for _, s := range searches {
		wg.Go(func() {
			if found, ok := s.run(row.CodeHash); ok {
				t.Errorf("the live code %s was recovered from the database alone with %s", found, s.name)
			}
		})
	}
	wg.Wait()

	// Control: the key derived from the at-rest key, which the
	// database does not hold, gives the stored hash.
	macKey, err := hkdf.Key(sha256.New, testAtRestKey, nil, "paywallet/otp-code-mac/v1", 32)
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, macKey)
	mac.Write([]byte(row.ID + "\x00" + row.CredentialID + "\x00" + code))
	if !hmac.Equal(mac.Sum(nil), row.CodeHash) {
		t.Errorf("control: HMAC-SHA-256 under the key derived from the at-rest key does not give the stored hash of the e-mailed code")
	}

	// A wrong code is refused, and then the right one logs in.
	client := mustKey(t)
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	r := e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", verifyBody(e.sealCode(am, wrong, client)), nil)
	if r.status != http.StatusUnauthorized {
		t.Fatalf("wrong code: %d %s", r.status, r.body)
	}
	body := verifyBody(e.sealCode(am, code, client))
	r = e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", body, nil)
	e.mustStatus(r, http.StatusAccepted)
	var ch wire.SignedRequestChallenge
	r.decode(t, &ch)
	r = e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", body, signed(mustStamp(t, client, ch.PayloadToSign), ch.RequestID))
	e.mustStatus(r, http.StatusOK)
	if n := e.activeSessions(w); n != 1 {
		t.Fatalf("%d active sessions after the login, want 1", n)
	}
}

// codeSearch is one way of hashing a candidate code: h over prefix || code.
type codeSearch struct {
	name   string
	h      hash.Hash
	prefix string
}

// run tries all 10^6 six-digit codes and returns the one whose hash is want.
func (s codeSearch) run(want []byte) (string, bool) {
	msg := []byte(s.prefix + "000000")
	digits := msg[len(s.prefix):]
	var sum [sha256.Size]byte
	for range 1_000_000 {
		s.h.Reset()
		s.h.Write(msg)
		if bytes.Equal(s.h.Sum(sum[:0]), want) {
			return string(digits), true
		}
		for i := len(digits) - 1; i >= 0; i-- { // the next code
			if digits[i] != '9' {
				digits[i]++
				break
			}
			digits[i] = '0'
		}
	}
	return "", false
}
