//go:build js && wasm

package main

import (
	"errors"
	"sync"
	"syscall/js"

	"paywallet/shared/walletcrypto"
)

// The session key outlives the tab in the origin's IndexedDB: a CryptoKey
// is stored by structured clone and stays non-extractable there, so a
// reload, a second tab or a browser restart resumes the session without any
// key byte ever being readable. One record, under "current", holds the
// session of this origin (the BFF's cookie is per origin too):
//
//	{key: CryptoKey, publicKey: "<66 hex>", sessionId: "Session:…", expiresAtMs: <Date.now() ms>}
//
// The page decides when to store, resume and delete (app.js); the module
// does the IndexedDB work so that the CryptoKey never has to be handed to
// page code.

const (
	vaultDB      = "paywallet"
	vaultVersion = 1
	vaultStore   = "session"
	vaultRecord  = "current"
)

// vault is the open database, shared by every call of this tab.
var vault struct {
	mu sync.Mutex
	db js.Value // IDBDatabase; undefined until opened
}

// errNoVault is wrapped by every IndexedDB failure, so that the page can
// tell "this browser will not keep keys" from a bad argument.
var errNoVault = errors.New("this browser does not let the wallet keep keys")

func vaultError(err error) error {
	if err == nil {
		return errNoVault
	}
	return errors.New(errNoVault.Error() + ": " + err.Error())
}

// openVault returns the database, opening (and on first use creating) it.
func openVault() (js.Value, error) {
	vault.mu.Lock()
	defer vault.mu.Unlock()
	if vault.db.Truthy() {
		return vault.db, nil
	}
	idb := js.Global().Get("indexedDB")
	if !idb.Truthy() {
		return js.Value{}, vaultError(errors.New("IndexedDB is not available"))
	}
	var req js.Value
	if err := catch(func() { req = idb.Call("open", vaultDB, vaultVersion) }); err != nil {
		return js.Value{}, vaultError(err)
	}
	upgrade := js.FuncOf(func(js.Value, []js.Value) any {
		db := req.Get("result")
		if !db.Get("objectStoreNames").Call("contains", vaultStore).Bool() {
			db.Call("createObjectStore", vaultStore)
		}
		return nil
	})
	defer upgrade.Release()
	req.Set("onupgradeneeded", upgrade)
	db, err := request(req, nil)
	if err != nil {
		return js.Value{}, vaultError(err)
	}
	// Another tab upgrading the database (a newer wallet) asks this
	// connection to close; the next call opens it again.
	var onVersionChange js.Func
	onVersionChange = js.FuncOf(func(js.Value, []js.Value) any {
		db.Call("close")
		vault.mu.Lock()
		if vault.db.Equal(db) {
			vault.db = js.Undefined()
		}
		vault.mu.Unlock()
		onVersionChange.Release()
		return nil
	})
	db.Set("onversionchange", onVersionChange)
	// A connection the browser closes by force (site data cleared, the
	// database deleted) gets close instead, and every later transaction on
	// it throws: drop it the same way.
	db.Set("onclose", onVersionChange)
	vault.db = db
	return db, nil
}

// request waits for an IDBRequest. onSuccess, if set, runs inside the
// success event, while the request's transaction is still active, so that
// it can issue the next request of the same transaction.
func request(req js.Value, onSuccess func(result js.Value)) (js.Value, error) {
	type settled struct {
		v   js.Value
		err error
	}
	ch := make(chan settled, 1)
	ok := js.FuncOf(func(js.Value, []js.Value) any {
		r := req.Get("result")
		if onSuccess != nil {
			if err := catch(func() { onSuccess(r) }); err != nil {
				ch <- settled{err: err}
				return nil
			}
		}
		ch <- settled{v: r}
		return nil
	})
	fail := js.FuncOf(func(js.Value, []js.Value) any {
		ch <- settled{err: jsError(req.Get("error"))}
		return nil
	})
	blocked := js.FuncOf(func(js.Value, []js.Value) any {
		ch <- settled{err: errors.New("the wallet's database is held open by an older tab")}
		return nil
	})
	req.Set("onsuccess", ok)
	req.Set("onerror", fail)
	if req.InstanceOf(js.Global().Get("IDBOpenDBRequest")) {
		req.Set("onblocked", blocked)
	}
	r := <-ch
	ok.Release()
	fail.Release()
	blocked.Release()
	return r.v, r.err
}

// completion waits until the transaction tx commits: only then is a write
// durable and visible to other tabs.
func completion(tx js.Value) error {
	ch := make(chan error, 1)
	done := js.FuncOf(func(js.Value, []js.Value) any { ch <- nil; return nil })
	fail := js.FuncOf(func(_ js.Value, a []js.Value) any {
		// A failed request's error reaches the transaction's onerror before
		// tx.error is set: read it from the event's target first.
		err := tx.Get("error")
		if ev := arg0(a); !err.Truthy() && ev.Type() == js.TypeObject && ev.Get("target").Type() == js.TypeObject {
			err = ev.Get("target").Get("error")
		}
		if err.Truthy() {
			ch <- jsError(err)
		} else {
			ch <- errors.New("the write was aborted")
		}
		return nil
	})
	tx.Set("oncomplete", done)
	tx.Set("onerror", fail)
	tx.Set("onabort", fail)
	err := <-ch
	done.Release()
	fail.Release()
	return err
}

// catch runs f and turns a JavaScript exception thrown inside it into an
// error (syscall/js panics with a js.Error).
func catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if jerr, ok := r.(js.Error); ok {
				err = jsError(jerr.Value)
				return
			}
			panic(r)
		}
	}()
	f()
	return nil
}

// storeInVault writes the session record, replacing any other.
func storeInVault(k *key, sessionID string, expiresAtMs float64) error {
	db, err := openVault()
	if err != nil {
		return err
	}
	record := objectConstructor.New()
	record.Set("key", k.private)
	record.Set("publicKey", k.public.CompressedHex())
	record.Set("sessionId", sessionID)
	record.Set("expiresAtMs", expiresAtMs)
	var tx js.Value
	if err := catch(func() {
		tx = db.Call("transaction", vaultStore, "readwrite")
		tx.Call("objectStore", vaultStore).Call("put", record, vaultRecord)
	}); err != nil {
		return vaultError(err)
	}
	if err := completion(tx); err != nil {
		return vaultError(err)
	}
	return nil
}

// loadFromVault reads the record; ok is false when there is none.
func loadFromVault() (record js.Value, ok bool, err error) {
	db, err := openVault()
	if err != nil {
		return js.Value{}, false, err
	}
	var req js.Value
	if err := catch(func() {
		req = db.Call("transaction", vaultStore, "readonly").Call("objectStore", vaultStore).Call("get", vaultRecord)
	}); err != nil {
		return js.Value{}, false, vaultError(err)
	}
	r, err := request(req, nil)
	if err != nil {
		return js.Value{}, false, vaultError(err)
	}
	return r, r.Type() == js.TypeObject, nil
}

// deleteFromVault deletes the record, only if it is sessionID's when
// sessionID is not empty. The read and the delete are one transaction, so
// a newer session stored by another tab meanwhile is never deleted.
func deleteFromVault(sessionID string) (bool, error) {
	return deleteFromVaultIf(func(r js.Value) bool {
		id := r.Get("sessionId")
		return sessionID == "" || id.Type() == js.TypeString && id.String() == sessionID
	})
}

// deleteFromVaultIf deletes the record if match says so, reading and
// deleting in one transaction.
func deleteFromVaultIf(match func(record js.Value) bool) (bool, error) {
	db, err := openVault()
	if err != nil {
		return false, err
	}
	var tx, req js.Value
	if err := catch(func() {
		tx = db.Call("transaction", vaultStore, "readwrite")
		req = tx.Call("objectStore", vaultStore).Call("get", vaultRecord)
	}); err != nil {
		return false, vaultError(err)
	}
	deleted := false
	if _, err := request(req, func(r js.Value) {
		if r.Type() != js.TypeObject || !match(r) {
			return
		}
		tx.Call("objectStore", vaultStore).Call("delete", vaultRecord)
		deleted = true
	}); err != nil {
		return false, vaultError(err)
	}
	if err := completion(tx); err != nil {
		return false, vaultError(err)
	}
	return deleted, nil
}

// storeSession(handle, {sessionId, expiresAtMs}) -> true
func (w *wallet) storeSession(args []js.Value) (any, error) {
	if err := checkCount(args, "handle", "session"); err != nil {
		return nil, err
	}
	handle, err := handleArg(args[0])
	if err != nil {
		return nil, err
	}
	sessionID, expiresAt, err := sessionArg(args[1])
	if err != nil {
		return nil, err
	}
	k, err := w.keys.get(handle, purposeSigning)
	if err != nil {
		return nil, err
	}
	if err := storeInVault(k, sessionID, expiresAt); err != nil {
		return nil, err
	}
	return true, nil
}

// resumeSession() -> null | {handle, publicKey, publicKeyUncompressed,
// purpose, sessionId, expiresAtMs}
func (w *wallet) resumeSession(args []js.Value) (any, error) {
	if err := checkCount(args); err != nil {
		return nil, err
	}
	r, ok, err := loadFromVault()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, nil
	}
	k, sessionID, expiresAt, valid := recordKey(r)
	// The record is the origin's, writable by any script of it: the key
	// must be the one its public key names, or stamps would carry a key
	// that never verifies. One probe signature settles it.
	valid = valid && expiresAt > jsDate.Call("now").Float() && provesKey(k)
	if !valid {
		// Expired, or not something this module wrote: either way it
		// signs for nothing. Delete it only if it is still that record
		// (another tab may have stored a new session meanwhile).
		same := func(now js.Value) bool {
			id := now.Get("sessionId")
			if sessionID == "" {
				return id.Type() != js.TypeString || id.String() == ""
			}
			return id.Type() == js.TypeString && id.String() == sessionID
		}
		if _, err := deleteFromVaultIf(same); err != nil {
			return nil, err
		}
		return nil, nil
	}
	h, err := w.keys.add(k)
	if err != nil {
		return nil, err
	}
	if _, err := w.keys.setExpiry(h, int64(expiresAt)); err != nil {
		return nil, err
	}
	out := keyInfo(h, k)
	out["sessionId"] = sessionID
	out["expiresAtMs"] = expiresAt
	return out, nil
}

// deleteSession(sessionId?) -> boolean
func (w *wallet) deleteSession(args []js.Value) (any, error) {
	if len(args) > 1 {
		return nil, checkCount(args, "sessionId")
	}
	id := ""
	if len(args) == 1 && !args[0].IsUndefined() && !args[0].IsNull() {
		s, err := stringArg(args[0], "sessionId", maxSessionID, true)
		if err != nil {
			return nil, err
		}
		id = s
	}
	deleted, err := deleteFromVault(id)
	if err != nil {
		// Where nothing can be stored, nothing stored can be deleted.
		return false, nil
	}
	return deleted, nil
}

const maxSessionID = 128

// sessionArg reads {sessionId, expiresAtMs}.
func sessionArg(v js.Value) (string, float64, error) {
	if v.Type() != js.TypeObject {
		return "", 0, errors.New("session must be an object {sessionId, expiresAtMs}")
	}
	id, err := stringArg(v.Get("sessionId"), "session.sessionId", maxSessionID, true)
	if err != nil {
		return "", 0, err
	}
	at := v.Get("expiresAtMs")
	if at.Type() != js.TypeNumber || !(at.Float() > 0 && at.Float() < 1<<53) {
		return "", 0, errors.New("session.expiresAtMs must be a positive number of milliseconds (Date.now())")
	}
	return id, at.Float(), nil
}

// recordKey checks a stored record's shape and turns it into a key. The
// sessionId is returned even when the record is unusable, so that it can
// be deleted precisely.
func recordKey(r js.Value) (k *key, sessionID string, expiresAt float64, ok bool) {
	if id := r.Get("sessionId"); id.Type() == js.TypeString {
		sessionID = id.String()
	}
	at := r.Get("expiresAtMs")
	if at.Type() == js.TypeNumber {
		expiresAt = at.Float()
	}
	ck, pubHex := r.Get("key"), r.Get("publicKey")
	if sessionID == "" || at.Type() != js.TypeNumber || pubHex.Type() != js.TypeString ||
		!ck.InstanceOf(js.Global().Get("CryptoKey")) || ck.Get("type").String() != "private" ||
		ck.Get("extractable").Bool() || ck.Get("algorithm").Get("name").String() != "ECDSA" ||
		ck.Get("algorithm").Get("namedCurve").String() != "P-256" ||
		!ck.Get("usages").Call("includes", "sign").Bool() {
		return nil, sessionID, expiresAt, false
	}
	pub, err := walletcrypto.ParsePublicKeyHex(pubHex.String())
	if err != nil {
		return nil, sessionID, expiresAt, false
	}
	return &key{private: ck, public: pub, purpose: purposeSigning}, sessionID, expiresAt, true
}

// provesKey reports whether k's CryptoKey signs for k's public key: a
// probe message signed with one verifies with the other.
func provesKey(k *key) bool {
	if k == nil {
		return false
	}
	probe := []byte("paywallet: is this the stored session's key")
	sig, err := sign(k.private, probe)
	return err == nil && (webCrypto{}).VerifyECDSA(k.public, probe, sig)
}
