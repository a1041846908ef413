package service

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"paywallet/service/bip39"
	"paywallet/service/store/sqlstore"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

func TestDeleteCredential(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.PasskeyChallengeInterval = -1 })
	w := e.newWallet("del@example.com")
	otpKey := mustKey(t)
	otpSession := e.login(w, otpKey)
	a := newAuthenticator(t)
	cred := e.addPasskey(w, otpKey, a)
	handle, _ := wire.WebAuthnUserHandle(w.account.ID)
	passkeyKey := mustKey(t)
	pc := e.passkeyChallenge(cred, passkeyKey.PublicKey().CompressedHex())
	r := e.do("POST", "/auth/credentials/"+cred.ID+"/verify", passkeyVerifyBody(a.assert(pc.Challenge, handle)), map[string]string{wire.HeaderRequestID: pc.RequestID})
	e.mustStatus(r, http.StatusOK)
	var passkeySession wire.Session
	r.decode(t, &passkeySession)

	path := "/auth/credentials/" + cred.ID
	ch := e.firstLeg("DELETE", path, nil)
	if ch.Type != "PASSKEY" || !strings.Contains(ch.PayloadToSign, `"ACTIVITY_TYPE_DELETE_AUTHENTICATORS"`) || !strings.Contains(ch.PayloadToSign, cred.ID) {
		t.Fatalf("challenge %+v", ch)
	}
	// The passkey cannot vouch for its own removal.
	r = e.do("DELETE", path, nil, signed(mustStamp(t, passkeyKey, ch.PayloadToSign), ch.RequestID))
	if r.status != 401 || r.errorBody(t).Code != "WALLET_SIGNATURE_INVALID" {
		t.Fatalf("signed by the passkey's own session: %d %s", r.status, r.body)
	}
	e.checkRefusals("DELETE", path, nil, commonRefusals(t, otpKey, mustKey(t)))
	ch = e.firstLeg("DELETE", path, nil)
	e.mustStatus(e.do("DELETE", path, nil, signed(mustStamp(t, otpKey, ch.PayloadToSign), ch.RequestID)), http.StatusNoContent)

	ids := e.activeSessionIDs(w.account.ID)
	if len(ids) != 1 || ids[0] != otpSession.ID {
		t.Fatalf("sessions after removing the passkey: %v (the passkey's %s must be gone)", ids, passkeySession.ID)
	}
	r = e.do("GET", "/auth/credentials?accountId="+w.account.ID, nil, nil)
	if strings.Contains(string(r.body), cred.ID) {
		t.Fatalf("credential still listed: %s", r.body)
	}
	// It cannot log in any more, and a second delete is 404.
	r = e.do("POST", path+"/challenge", map[string]any{"clientPublicKey": passkeyKey.PublicKey().CompressedHex()}, nil)
	if r.status != 404 {
		t.Fatalf("challenge of a removed passkey: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", path, nil, nil); r.status != 404 {
		t.Fatalf("second delete: %d %s", r.status, r.body)
	}
	// The e-mail credential is now the last one: it stays.
	r = e.do("DELETE", "/auth/credentials/"+w.credential.ID, nil, nil)
	if r.status != 400 {
		t.Fatalf("removing the last credential: %d %s", r.status, r.body)
	}
}

func TestExportWallet(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, func(c *Config) {
		st, err := sqlstore.OpenSQLite(t.Context(), filepath.Join(dir, "export.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		c.Store = st
	})
	w := e.newWallet("exp@example.com")
	k := mustKey(t)
	e.login(w, k)
	path := "/internal-accounts/" + w.account.ID + "/export"

	export := func() string {
		t.Helper()
		target := mustKey(t)
		body := map[string]any{"clientPublicKey": target.PublicKey().UncompressedHex()}
		ch := e.firstLeg("POST", path, body)
		if !strings.Contains(ch.PayloadToSign, `"ACTIVITY_TYPE_EXPORT_WALLET"`) || !strings.Contains(ch.PayloadToSign, target.PublicKey().UncompressedHex()) {
			t.Fatalf("payload %s", ch.PayloadToSign)
		}
		r := e.do("POST", path, body, signed(mustStamp(t, k, ch.PayloadToSign), ch.RequestID))
		e.mustStatus(r, http.StatusOK)
		var out wire.ExportResponse
		r.decode(t, &out)
		if out.ID != w.account.ID {
			t.Fatalf("export of %s", out.ID)
		}
		org, mnemonic, err := walletcrypto.OpenExportBundle(out.EncryptedWalletCredentials, e.svc.SignerPublicKey(), target)
		if err != nil {
			t.Fatalf("open the export bundle: %v", err)
		}
		if org != w.account.ID || !bip39.Valid(string(mnemonic)) || len(strings.Fields(string(mnemonic))) != 24 {
			t.Fatalf("bundle for %s holds %q", org, mnemonic)
		}
		return string(mnemonic)
	}
	first := export()
	if second := export(); second != first {
		t.Fatal("two exports gave two different wallets")
	}
	// The mnemonic is sealed at rest: no file of the database holds its words.
	files, _ := filepath.Glob(filepath.Join(dir, "export.db*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(strings.Fields(first)[0]+" "+strings.Fields(first)[1]+" "+strings.Fields(first)[2])) {
			t.Fatalf("%s holds the mnemonic in the clear", f)
		}
	}
	// A retry with another key than the first leg's is a body mismatch.
	refusals := append(commonRefusals(t, k, mustKey(t)), refusal{
		name: "another clientPublicKey on the retry",
		headers: func(ch wire.SignedRequestChallenge) map[string]string {
			return signed(mustStamp(t, k, ch.PayloadToSign), ch.RequestID)
		},
		body: map[string]any{"clientPublicKey": mustKey(t).PublicKey().UncompressedHex()},
		code: "WALLET_SIGNATURE_BODY_MISMATCH",
	})
	e.checkRefusals("POST", path, map[string]any{"clientPublicKey": mustKey(t).PublicKey().UncompressedHex()}, refusals)
	if r := e.do("POST", path, map[string]any{"clientPublicKey": "04zz"}, nil); r.status != 400 || !fieldNames(t, r)["clientPublicKey"] {
		t.Fatalf("bad key: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/internal-accounts/InternalAccount:0199a3c4-0000-7000-8000-0000000000aa/export", map[string]any{"clientPublicKey": mustKey(t).PublicKey().UncompressedHex()}, nil); r.status != 404 {
		t.Fatalf("unknown account: %d %s", r.status, r.body)
	}
}

func TestUpdateInternalAccount(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("priv@example.com")
	k := mustKey(t)
	e.login(w, k)
	path := "/internal-accounts/" + w.account.ID
	body := map[string]any{"privateEnabled": true}
	ch := e.firstLeg("PATCH", path, body)
	r := e.do("PATCH", path, body, signed(mustStamp(t, k, ch.PayloadToSign), ch.RequestID))
	e.mustStatus(r, http.StatusOK)
	var acct wire.InternalAccount
	r.decode(t, &acct)
	if acct.PrivateEnabled == nil || !*acct.PrivateEnabled || acct.ID != w.account.ID {
		t.Fatalf("updated %s", r.body)
	}
	refusals := append(commonRefusals(t, k, mustKey(t)), refusal{
		name: "another value on the retry",
		headers: func(ch wire.SignedRequestChallenge) map[string]string {
			return signed(mustStamp(t, k, ch.PayloadToSign), ch.RequestID)
		},
		body: map[string]any{"privateEnabled": true},
		code: "WALLET_SIGNATURE_BODY_MISMATCH",
	})
	e.checkRefusals("PATCH", path, map[string]any{"privateEnabled": false}, refusals)
	r = e.do("GET", "/customers/internal-accounts?customerId="+w.customer.ID, nil, nil)
	if !strings.Contains(string(r.body), `"privateEnabled":true`) {
		t.Fatalf("refused retries changed the account: %s", r.body)
	}
	if r := e.do("PATCH", path, map[string]any{}, nil); r.status != 400 || !fieldNames(t, r)["privateEnabled"] {
		t.Fatalf("empty update: %d %s", r.status, r.body)
	}
}

func TestUpdateCustomerEmail(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("old@example.com")
	other := e.newWallet("taken@example.com")
	k := mustKey(t)
	e.login(w, k)
	path := "/customers/" + w.customer.ID

	// Not the e-mail: applied at once.
	r := e.do("PATCH", path, map[string]any{"customerType": "INDIVIDUAL", "fullName": "Old Name"}, nil)
	e.mustStatus(r, http.StatusOK)

	body := map[string]any{"customerType": "INDIVIDUAL", "email": "new@example.com"}
	ch := e.firstLeg("PATCH", path, body)
	if ch.Type != "EMAIL_OTP" || !strings.Contains(ch.PayloadToSign, `"ACTIVITY_TYPE_UPDATE_USER_EMAIL"`) {
		t.Fatalf("challenge %+v", ch)
	}
	e.checkRefusals("PATCH", path, body, commonRefusals(t, k, mustKey(t)))
	r = e.do("PATCH", path, body, signed(mustStamp(t, k, ch.PayloadToSign), ch.RequestID))
	e.mustStatus(r, http.StatusOK)
	var c wire.Customer
	r.decode(t, &c)
	if c.Email != "new@example.com" || c.FullName != "Old Name" {
		t.Fatalf("customer %s", r.body)
	}
	r = e.do("GET", "/auth/credentials?accountId="+w.account.ID, nil, nil)
	if !strings.Contains(string(r.body), `"nickname":"new@example.com"`) {
		t.Fatalf("credential not renamed: %s", r.body)
	}
	// The code now goes to the new address.
	e.clock.Advance(time.Minute)
	w.email = "new@example.com"
	e.challenge(w)

	// Another wallet's address: 409, and nothing changes.
	body = map[string]any{"customerType": "INDIVIDUAL", "email": other.email, "fullName": "Changed"}
	ch = e.firstLeg("PATCH", path, body)
	r = e.do("PATCH", path, body, signed(mustStamp(t, k, ch.PayloadToSign), ch.RequestID))
	if r.status != 409 || r.errorBody(t).Code != "EMAIL_OTP_EMAIL_ALREADY_EXISTS" {
		t.Fatalf("taken e-mail: %d %s", r.status, r.body)
	}
	r = e.do("GET", path, nil, nil)
	if !strings.Contains(string(r.body), `"fullName":"Old Name"`) {
		t.Fatalf("a refused update changed the customer: %s", r.body)
	}

	// Bad bodies name every field.
	r = e.do("PATCH", path, map[string]any{"customerType": "BUSINESS", "email": "nope", "umaAddress": "x"}, nil)
	if r.status != 400 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	fields := fieldNames(t, r)
	for _, f := range []string{"email", "umaAddress"} {
		if !fields[f] {
			t.Errorf("no error for %s in %s", f, r.body)
		}
	}
	if r := e.do("PATCH", path, map[string]any{"customerType": "BUSINESS", "fullName": "X"}, nil); r.status != 400 || !fieldNames(t, r)["customerType"] {
		t.Fatalf("changing the type: %d %s", r.status, r.body)
	}
}

func TestUpdateCustomerEmailCredentialSetChanged(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("set@example.com")
	k := mustKey(t)
	e.login(w, k)
	passkey := e.addPasskey(w, k, newAuthenticator(t))
	_ = passkey
	path := "/customers/" + w.customer.ID
	body := map[string]any{"customerType": "INDIVIDUAL", "email": "moved@example.com"}
	ch := e.firstLeg("PATCH", path, body)

	// The e-mail credential is removed and made again between the legs.
	del := e.firstLeg("DELETE", "/auth/credentials/"+w.credential.ID, nil)
	_ = del
	// Signing with the e-mail session is not allowed for its own removal;
	// use a passkey session.
	a := newAuthenticator(t)
	cred := e.addPasskey(w, k, a)
	handle, _ := wire.WebAuthnUserHandle(w.account.ID)
	pk := mustKey(t)
	pc := e.passkeyChallenge(cred, pk.PublicKey().CompressedHex())
	e.mustStatus(e.do("POST", "/auth/credentials/"+cred.ID+"/verify", passkeyVerifyBody(a.assert(pc.Challenge, handle)), map[string]string{wire.HeaderRequestID: pc.RequestID}), http.StatusOK)
	del = e.firstLeg("DELETE", "/auth/credentials/"+w.credential.ID, nil)
	e.mustStatus(e.do("DELETE", "/auth/credentials/"+w.credential.ID, nil, signed(mustStamp(t, pk, del.PayloadToSign), del.RequestID)), http.StatusNoContent)
	add := map[string]any{"type": "EMAIL_OTP", "accountId": w.account.ID}
	ach := e.firstLeg("POST", "/auth/credentials", add)
	r := e.do("POST", "/auth/credentials", add, signed(mustStamp(t, pk, ach.PayloadToSign), ach.RequestID))
	e.mustStatus(r, http.StatusCreated)
	var am wire.AuthMethod
	r.decode(t, &am)
	if am.Type != "EMAIL_OTP" || am.OTPEncryptionTargetBundle == "" || am.Nickname != w.email {
		t.Fatalf("re-added e-mail credential %s", r.body)
	}

	r = e.do("PATCH", path, body, signed(mustStamp(t, pk, ch.PayloadToSign), ch.RequestID))
	if r.status != 409 || r.errorBody(t).Code != "EMAIL_OTP_CREDENTIAL_SET_CHANGED" {
		t.Fatalf("set changed: %d %s", r.status, r.body)
	}
}
