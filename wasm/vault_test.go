//go:build js && wasm

package main

// Tests of storeSession, resumeSession and deleteSession (vault.go). Node
// has no IndexedDB, so idbShim below is a small in-memory one with exactly
// what vault.go uses, values kept by structuredClone as IndexedDB does
// (Node clones a CryptoKey, non-extractable as it was), and modes in which
// it fails the way browsers do.

import (
	"slices"
	"strings"
	"syscall/js"
	"testing"
	"time"

	"paywallet/shared/walletcrypto"
)

const idbShimJS = `(() => {
	const fail = (name, message) => new DOMException(message, name);
	const later = (f) => setTimeout(f, 0);

	const shim = {
		// "ok", or how to fail: "open-error" (the open request errors, as in
		// a private window that refuses storage), "open-throws" (open throws,
		// as in an opaque origin), "blocked" (an older connection never
		// closes), "commit-aborts" (readwrite transactions abort at commit,
		// as on a full disk), "read-error" (get requests fail).
		mode: "ok",
		databases: new Map(), // name -> {version, stores: Map<name, Map<key, value>>}
		connections: [],      // every connection opened
		opens: 0,
		// Empties the browser's storage, as "clear site data" does: open
		// connections are closed by force, which fires close at them.
		reset() {
			this.mode = "ok";
			this.databases.clear();
			for (const c of this.connections) this.forceClose(c);
			this.connections = [];
			this.opens = 0;
			globalThis.indexedDB = factory;
		},
		// The stored value itself (not a clone), or undefined.
		value(db, store, key) {
			const d = this.databases.get(db);
			const s = d && d.stores.get(store);
			return s ? s.get(key) : undefined;
		},
		// Writes a value as another tab (an older or newer module) would.
		write(db, store, key, value) {
			this.databases.get(db).stores.get(store).set(key, structuredClone(value));
		},
		forceClose(c) {
			if (c._closed) return;
			c._closed = true;
			if (typeof c.onclose === "function") c.onclose({type: "close", target: c});
		},
		versionChange() {
			for (const c of this.connections) {
				if (!c._closed && typeof c.onversionchange === "function") {
					c.onversionchange({type: "versionchange", target: c, oldVersion: c.version, newVersion: c.version + 1});
				}
			}
		},
		uninstall() { delete globalThis.indexedDB; },
	};

	const fire = (target, type, extra) => {
		const h = target["on" + type];
		if (typeof h === "function") h.call(target, Object.assign({type, target}, extra));
	};

	class StringList {
		constructor(names) { this._names = names; }
		contains(name) { return this._names.includes(name); }
		item(i) { return this._names[i] ?? null; }
		get length() { return this._names.length; }
	}

	class IDBRequest {
		constructor(source, transaction) {
			this.source = source;
			this.transaction = transaction;
			this.readyState = "pending";
			this._result = undefined;
			this._error = null;
			this.onsuccess = null;
			this.onerror = null;
		}
		get result() {
			if (this.readyState !== "done") throw fail("InvalidStateError", "The request has not finished.");
			return this._result;
		}
		get error() {
			if (this.readyState !== "done") throw fail("InvalidStateError", "The request has not finished.");
			return this._error;
		}
	}

	class IDBOpenDBRequest extends IDBRequest {
		constructor() {
			super(null, null);
			this.onupgradeneeded = null;
			this.onblocked = null;
		}
	}

	class IDBDatabase {
		constructor(name, data) {
			this.name = name;
			this._data = data;
			this.version = data.version;
			this._closed = false;
			this._upgrading = false;
			this.onversionchange = null;
			this.onclose = null;
		}
		get objectStoreNames() { return new StringList([...this._data.stores.keys()].sort()); }
		createObjectStore(name, options) {
			if (!this._upgrading) throw fail("InvalidStateError", "Not in a version change transaction.");
			if (this._data.stores.has(name)) throw fail("ConstraintError", "An object store with that name exists.");
			if (options && (options.keyPath != null || options.autoIncrement)) throw fail("NotSupportedError", "The shim has out-of-line keys only.");
			this._data.stores.set(name, new Map());
			return {name};
		}
		transaction(names, mode = "readonly") {
			if (this._closed) throw fail("InvalidStateError", "The database connection is closing.");
			if (this._upgrading) throw fail("InvalidStateError", "A version change transaction is running.");
			const list = typeof names === "string" ? [names] : [...names];
			for (const n of list) {
				if (!this._data.stores.has(n)) throw fail("NotFoundError", "One of the specified object stores was not found.");
			}
			if (mode !== "readonly" && mode !== "readwrite") throw new TypeError("invalid mode " + mode);
			return new IDBTransaction(this, list, mode);
		}
		close() { this._closed = true; }
	}

	class IDBTransaction {
		constructor(db, names, mode) {
			this.db = db;
			this.mode = mode;
			this.objectStoreNames = new StringList(names);
			this.error = null;
			this.oncomplete = null;
			this.onerror = null;
			this.onabort = null;
			this._names = names;
			this._pending = 0;
			this._state = "active"; // then "inactive", "finished"
			// A working copy, committed on complete.
			this._stores = new Map(names.map((n) => [n, new Map(db._data.stores.get(n))]));
			// Active until control returns to the event loop.
			queueMicrotask(() => { if (this._state === "active") this._state = "inactive"; });
			later(() => this._maybeCommit());
		}
		objectStore(name) {
			if (this._state === "finished") throw fail("InvalidStateError", "The transaction has finished.");
			if (!this._names.includes(name)) throw fail("NotFoundError", "The object store is not in this transaction.");
			return new IDBObjectStore(this, name);
		}
		_request(store, kind, run) {
			if (this._state !== "active") throw fail("TransactionInactiveError", "The transaction is not active.");
			if (kind !== "get" && this.mode === "readonly") throw fail("ReadOnlyError", "The transaction is read-only.");
			const req = new IDBRequest(store, this);
			this._pending++;
			later(() => {
				if (this._state === "finished") return;
				this._pending--;
				req.readyState = "done";
				let result, error = null;
				if (kind === "get" && shim.mode === "read-error") {
					error = fail("UnknownError", "The shim failed the read.");
				} else {
					try { result = run(this._stores.get(store.name)); } catch (e) { error = e; }
				}
				if (error) {
					req._error = error;
					fire(req, "error");
					fire(this, "error", {target: req});
					later(() => this._abort(error));
					return;
				}
				req._result = result;
				this._state = "active";
				try {
					fire(req, "success");
				} catch (e) {
					this._state = "inactive";
					later(() => this._abort(e));
					return;
				}
				this._state = "inactive";
				later(() => this._maybeCommit());
			});
			return req;
		}
		_maybeCommit() {
			if (this._state !== "inactive" || this._pending > 0) return;
			if (this.mode === "readwrite" && shim.mode === "commit-aborts") {
				this._abort(fail("QuotaExceededError", "The shim is out of space."));
				return;
			}
			this._state = "finished";
			if (this.mode === "readwrite") {
				for (const [n, m] of this._stores) this.db._data.stores.set(n, m);
			}
			fire(this, "complete");
		}
		_abort(error) {
			if (this._state === "finished") return;
			this._state = "finished";
			this.error = error;
			fire(this, "abort");
		}
	}

	class IDBObjectStore {
		constructor(tx, name) { this.transaction = tx; this.name = name; }
		put(value, key) {
			return this._write(() => {
				if (key === undefined) throw fail("DataError", "The object store uses out-of-line keys and the key parameter was not provided.");
				const copy = structuredClone(value); // DataCloneError, as IndexedDB throws
				return (m) => { m.set(key, copy); return key; };
			});
		}
		delete(key) { return this._write(() => (m) => { m.delete(key); return undefined; }); }
		get(key) {
			return this.transaction._request(this, "get", (m) => (m.has(key) ? structuredClone(m.get(key)) : undefined));
		}
		_write(prepare) {
			const tx = this.transaction;
			if (tx._state !== "active") throw fail("TransactionInactiveError", "The transaction is not active.");
			if (tx.mode === "readonly") throw fail("ReadOnlyError", "The transaction is read-only.");
			return tx._request(this, "write", prepare());
		}
	}

	const factory = {
		open(name, version) {
			if (shim.mode === "open-throws") throw fail("SecurityError", "The operation is insecure.");
			if (version !== undefined && !(Number.isInteger(version) && version >= 1)) throw new TypeError("invalid version");
			const req = new IDBOpenDBRequest();
			later(() => {
				if (shim.mode === "open-error") {
					req.readyState = "done";
					req._error = fail("InvalidStateError", "A mutation operation was attempted on a database that did not allow mutations.");
					fire(req, "error");
					return;
				}
				if (shim.mode === "blocked") {
					fire(req, "blocked", {oldVersion: version, newVersion: version});
					return; // and it never opens
				}
				let data = shim.databases.get(name);
				const oldVersion = data ? data.version : 0;
				const newVersion = version ?? Math.max(oldVersion, 1);
				if (newVersion < oldVersion) {
					req.readyState = "done";
					req._error = fail("VersionError", "The requested version is less than the existing version.");
					fire(req, "error");
					return;
				}
				if (!data) {
					data = {version: 0, stores: new Map()};
					shim.databases.set(name, data);
				}
				const db = new IDBDatabase(name, data);
				shim.connections.push(db);
				shim.opens++;
				req.readyState = "done";
				req._result = db;
				if (newVersion > oldVersion) {
					data.version = newVersion;
					db.version = newVersion;
					db._upgrading = true;
					try { fire(req, "upgradeneeded", {oldVersion, newVersion}); } finally { db._upgrading = false; }
				}
				later(() => fire(req, "success"));
			});
			return req;
		},
	};

	globalThis.IDBRequest = IDBRequest;
	globalThis.IDBOpenDBRequest = IDBOpenDBRequest;
	globalThis.indexedDB = factory;
	return shim;
})()`

// idbShim is the shim's control object.
var idbShim js.Value

// installIDBShim sets globalThis.indexedDB to the shim. Node 20 has none;
// should a later Node have one, the shim replaces it for the tests.
func installIDBShim() {
	idbShim = js.Global().Call("eval", idbShimJS)
}

// resetVault empties the shim, puts it in "ok" mode and drops the module's
// open connection, before the test and after it.
func resetVault(t *testing.T) {
	reset := func() {
		idbShim.Call("reset")
		vault.mu.Lock()
		vault.db = js.Undefined()
		vault.mu.Unlock()
	}
	reset()
	t.Cleanup(reset)
}

// newTab drops the module's connection, as a new tab has none.
func newTab() {
	vault.mu.Lock()
	vault.db = js.Undefined()
	vault.mu.Unlock()
}

// vaultRecordValue returns the stored session record (undefined if none).
func vaultRecordValue(t *testing.T) js.Value {
	t.Helper()
	return idbShim.Call("value", vaultDB, vaultStore, vaultRecord)
}

// sessionObject is storeSession's second argument.
func sessionObject(id string, expiresAtMs float64) js.Value {
	o := js.Global().Get("Object").New()
	o.Set("sessionId", id)
	o.Set("expiresAtMs", expiresAtMs)
	return o
}

// checkRecord checks the stored record: exactly {key, publicKey,
// sessionId, expiresAtMs}, the key a non-extractable private ECDSA
// CryptoKey, and no bytes anywhere else.
func checkRecord(t *testing.T, pub *walletcrypto.PublicKey, id string, expiresAtMs float64) {
	t.Helper()
	r := vaultRecordValue(t)
	if got, want := ownKeys(t, r), []string{"expiresAtMs", "key", "publicKey", "sessionId"}; !slices.Equal(got, want) {
		t.Fatalf("record keys %q, want %q", got, want)
	}
	ck := r.Get("key")
	if !ck.InstanceOf(js.Global().Get("CryptoKey")) {
		t.Fatalf("record key is %s, want a CryptoKey", jsString(ck))
	}
	if ck.Get("extractable").Type() != js.TypeBoolean || ck.Get("extractable").Bool() || ck.Get("type").String() != "private" ||
		ck.Get("algorithm").Get("name").String() != "ECDSA" || !slices.Equal(jsStrings(ck.Get("usages")), []string{"sign"}) {
		t.Fatalf("record key: extractable %v, type %s, algorithm %s, usages %v", ck.Get("extractable"), ck.Get("type"),
			ck.Get("algorithm").Get("name"), jsStrings(ck.Get("usages")))
	}
	if _, err := awaitPromise(subtleOrFatal(t).Call("exportKey", "pkcs8", ck)); err == nil {
		t.Fatal("the stored key exports")
	}
	if f := r.Get("publicKey"); f.Type() != js.TypeString || f.String() != pub.CompressedHex() {
		t.Fatalf("record publicKey %s, want %s", jsString(f), pub.CompressedHex())
	}
	if f := r.Get("sessionId"); f.Type() != js.TypeString || f.String() != id {
		t.Fatalf("record sessionId %s, want %s", jsString(f), id)
	}
	if f := r.Get("expiresAtMs"); f.Type() != js.TypeNumber || f.Float() != expiresAtMs {
		t.Fatalf("record expiresAtMs %s, want %v", jsString(f), expiresAtMs)
	}
}

// checkResumed checks a resumeSession result and returns its key.
func checkResumed(t *testing.T, v js.Value, pub *walletcrypto.PublicKey, id string, expiresAtMs float64) keyResult {
	t.Helper()
	want := []string{"expiresAtMs", "handle", "publicKey", "publicKeyUncompressed", "purpose", "sessionId"}
	if got := ownKeys(t, v); !slices.Equal(got, want) {
		t.Fatalf("resumeSession keys %q, want %q", got, want)
	}
	k := checkKeyFields(t, v, "signing")
	if !k.public.Equal(pub) {
		t.Fatalf("resumed public key %s, want %s", k.public, pub)
	}
	if got := stringField(t, v, "sessionId"); got != id {
		t.Fatalf("sessionId %q, want %q", got, id)
	}
	if f := v.Get("expiresAtMs"); f.Type() != js.TypeNumber || f.Float() != expiresAtMs {
		t.Fatalf("expiresAtMs %s, want %v", jsString(f), expiresAtMs)
	}
	return k
}

// TestVaultResumeInAFreshTab stores a session key and resumes it in what
// is another tab: a new key store, a new wallet object, a new connection.
// Both kinds of session key are stored: one made by generateKey and one
// opened from a sealed bundle (an imported PKCS#8 key).
func TestVaultResumeInAFreshTab(t *testing.T) {
	client := newKey(t, "recipient")
	defer mustCall(t, "forget", client.handle)
	scalar := newStdECDH(t).k.Bytes()
	for _, tt := range []struct {
		name string
		make func(t *testing.T) keyResult
	}{
		{"generated", func(t *testing.T) keyResult { return newKey(t, "signing") }},
		{"decrypted", func(t *testing.T) keyResult {
			return checkKeyResult(t, mustCall(t, "decryptSessionKey", client.handle, sealScalar(t, client.public, scalar)), "signing")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resetVault(t)
			k := tt.make(t)
			id := "Session:0190a1b2-c3d4-7e5f-8a9b-" + tt.name
			at := float64(int64(dateNow()) + 3_600_000)
			if v := mustCall(t, "storeSession", k.handle, sessionObject(id, at)); v.Type() != js.TypeBoolean || !v.Bool() {
				t.Fatalf("storeSession = %s, want true", jsString(v))
			}
			checkRecord(t, k.public, id, at)
			mustCall(t, "forget", k.handle)

			// The other tab.
			newTab()
			otherKeys := newKeyStore()
			other, _ := newWallet(otherKeys)
			v := mustCallOn(t, other, "resumeSession")
			r := checkResumed(t, v, k.public, id, at)
			if r.handle == k.handle {
				t.Fatal("the resumed session has the old handle")
			}
			for _, payload := range []string{"resumed", `{"amount":"1.00"}`} {
				verifyStamp(t, mustCallOn(t, other, "stamp", r.handle, payload), payload, k.public)
			}
			// The handle is the other tab's, and it expires with the session.
			wantReject(t, "stamp: unknown key handle", "stamp", r.handle, "x")
			if e := entryOf(otherKeys, r.handle); e == nil || e.expiry != int64(at) || e.timer.IsUndefined() {
				t.Fatal("the resumed handle does not expire with the session")
			}
			// Resuming again gives yet another handle for the same key, in
			// this tab too; the record stays.
			v2 := mustCall(t, "resumeSession")
			r2 := checkResumed(t, v2, k.public, id, at)
			if r2.handle == r.handle {
				t.Fatal("two resumes share a handle")
			}
			verifyStamp(t, mustCall(t, "stamp", r2.handle, "here"), "here", k.public)
			mustCall(t, "forget", r2.handle)
			mustCallOn(t, other, "forget", r.handle)
			checkRecord(t, k.public, id, at)
		})
	}
}

func TestVaultStoreReplaces(t *testing.T) {
	resetVault(t)
	if v := mustCall(t, "resumeSession"); !v.IsNull() {
		t.Fatalf("resumeSession on an empty vault = %s, want null", jsString(v))
	}
	a := newKey(t, "signing")
	defer mustCall(t, "forget", a.handle)
	b := newKey(t, "signing")
	defer mustCall(t, "forget", b.handle)
	atA, atB := dateNow()+60_000, dateNow()+120_000
	mustCall(t, "storeSession", a.handle, sessionObject("Session:a", atA))
	mustCall(t, "storeSession", b.handle, sessionObject("Session:b", atB))
	checkRecord(t, b.public, "Session:b", atB)
	r := checkResumed(t, mustCall(t, "resumeSession"), b.public, "Session:b", atB)
	mustCall(t, "forget", r.handle)
	// The store is one connection, opened once.
	if n := idbShim.Get("opens").Int(); n != 1 {
		t.Fatalf("%d connections opened, want 1", n)
	}
}

func TestVaultExpiry(t *testing.T) {
	t.Run("expired record", func(t *testing.T) {
		resetVault(t)
		k := newKey(t, "signing")
		defer mustCall(t, "forget", k.handle)
		mustCall(t, "storeSession", k.handle, sessionObject("Session:old", dateNow()-1))
		if vaultRecordValue(t).IsUndefined() {
			t.Fatal("nothing stored")
		}
		if v := mustCall(t, "resumeSession"); !v.IsNull() {
			t.Fatalf("resumeSession = %s, want null", jsString(v))
		}
		if r := vaultRecordValue(t); !r.IsUndefined() {
			t.Fatalf("the expired record is still stored: %s", jsString(r))
		}
	})

	t.Run("expires after resuming", func(t *testing.T) {
		resetVault(t)
		k := newKey(t, "signing")
		defer mustCall(t, "forget", k.handle)
		at := dateNow() + 800
		mustCall(t, "storeSession", k.handle, sessionObject("Session:short", at))
		r := checkResumed(t, mustCall(t, "resumeSession"), k.public, "Session:short", at)
		mustCall(t, "stamp", r.handle, "in time")
		waitGone(t, r.handle)
		wantReject(t, "stamp: unknown key handle", "stamp", r.handle, "too late")
		for deadline := time.Now().Add(2 * time.Second); dateNow() <= at; {
			if time.Now().After(deadline) {
				t.Fatal("clock stuck")
			}
			time.Sleep(10 * time.Millisecond)
		}
		if v := mustCall(t, "resumeSession"); !v.IsNull() {
			t.Fatalf("resumeSession after expiry = %s, want null", jsString(v))
		}
		if !vaultRecordValue(t).IsUndefined() {
			t.Fatal("the expired record is still stored")
		}
	})
}

// TestVaultRefusesForeignRecords: a record this module did not write (or
// an older one wrote) resumes as null and is deleted.
func TestVaultRefusesForeignRecords(t *testing.T) {
	s := subtleOrFatal(t)
	good := newKey(t, "signing")
	defer mustCall(t, "forget", good.handle)
	goodKey := storedKey(t, good.handle, purposeSigning).private
	gen := func(alg js.Value, extractable bool, usages js.Value) js.Value {
		pair, err := awaitPromise(s.Call("generateKey", alg, extractable, usages))
		if err != nil {
			t.Fatal(err)
		}
		return pair
	}
	extractable := gen(algECDSA, true, usagesSign)
	ecdhPair := gen(algECDH, false, usagesDerive)
	p384 := gen(jsObject("name", "ECDSA", "namedCurve", "P-384"), false, usagesSign)
	other := newKey(t, "signing")
	defer mustCall(t, "forget", other.handle)
	later := dateNow() + 60_000
	record := func(key any, pub any, id any, at any) js.Value {
		o := js.Global().Get("Object").New()
		for k, v := range map[string]any{"key": key, "publicKey": pub, "sessionId": id, "expiresAtMs": at} {
			if v != nil {
				o.Set(k, v)
			}
		}
		return o
	}
	pub := good.public.CompressedHex()
	for _, tt := range []struct {
		name   string
		record js.Value
	}{
		{"extractable key", record(extractable.Get("privateKey"), pub, "Session:x", later)},
		{"ECDH key", record(ecdhPair.Get("privateKey"), pub, "Session:x", later)},
		{"public key", record(extractable.Get("publicKey"), pub, "Session:x", later)},
		{"bytes for a key", record(js.Global().Get("Uint8Array").New(32), pub, "Session:x", later)},
		{"no key", record(nil, pub, "Session:x", later)},
		{"bad publicKey", record(goodKey, "04"+strings.Repeat("11", 64), "Session:x", later)},
		{"no publicKey", record(goodKey, nil, "Session:x", later)},
		{"no sessionId", record(goodKey, pub, nil, later)},
		{"empty sessionId", record(goodKey, pub, "", later)},
		{"expiresAtMs a string", record(goodKey, pub, "Session:x", "9999999999999")},
		// A key of another curve, and a key stored beside another key's
		// public half: stamps would never verify.
		{"P-384 key", record(p384.Get("privateKey"), pub, "Session:x", later)},
		{"another key's publicKey", record(goodKey, other.public.CompressedHex(), "Session:x", later)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resetVault(t)
			mustCall(t, "deleteSession") // opens (and creates) the database
			idbShim.Call("write", vaultDB, vaultStore, vaultRecord, tt.record)
			if v := mustCall(t, "resumeSession"); !v.IsNull() {
				t.Fatalf("resumeSession = %s, want null", jsString(v))
			}
			if r := vaultRecordValue(t); !r.IsUndefined() {
				t.Fatalf("the record is still stored: %s", jsString(r))
			}
		})
	}
	// The same record with the good key resumes: the cases above fail for
	// the one thing each changes.
	resetVault(t)
	mustCall(t, "deleteSession")
	idbShim.Call("write", vaultDB, vaultStore, vaultRecord, record(goodKey, pub, "Session:x", later))
	r := checkResumed(t, mustCall(t, "resumeSession"), good.public, "Session:x", later)
	mustCall(t, "forget", r.handle)
}

func TestVaultDeleteSession(t *testing.T) {
	resetVault(t)
	k := newKey(t, "signing")
	defer mustCall(t, "forget", k.handle)
	at := dateNow() + 60_000
	store := func() {
		t.Helper()
		mustCall(t, "storeSession", k.handle, sessionObject("Session:mine", at))
	}
	isBool := func(v js.Value, want bool) {
		t.Helper()
		if v.Type() != js.TypeBoolean || v.Bool() != want {
			t.Fatalf("deleteSession = %s, want %v", jsString(v), want)
		}
	}

	store()
	isBool(mustCall(t, "deleteSession", "Session:other"), false)
	checkRecord(t, k.public, "Session:mine", at)
	isBool(mustCall(t, "deleteSession", "Session:mine"), true)
	if !vaultRecordValue(t).IsUndefined() {
		t.Fatal("deleteSession(id) left the record")
	}
	isBool(mustCall(t, "deleteSession", "Session:mine"), false)

	for _, args := range [][]any{nil, {js.Undefined()}, {js.Null()}} {
		store()
		isBool(mustCall(t, "deleteSession", args...), true)
		if !vaultRecordValue(t).IsUndefined() {
			t.Fatalf("deleteSession(%v) left the record", args)
		}
		isBool(mustCall(t, "deleteSession", args...), false)
	}
	if v := mustCall(t, "resumeSession"); !v.IsNull() {
		t.Fatalf("resumeSession after delete = %s", jsString(v))
	}
	// The key in memory is not the vault's to delete.
	mustCall(t, "stamp", k.handle, "still here")

	for _, tt := range []struct {
		args []any
		want string
	}{
		{[]any{5}, "deleteSession: sessionId must be a string, got number"},
		{[]any{""}, "deleteSession: sessionId must not be empty"},
		{[]any{strings.Repeat("s", maxSessionID+1)}, "deleteSession: sessionId is longer than 128 bytes"},
		{[]any{"a", "b"}, "deleteSession: expected 1 argument (sessionId), got 2"},
	} {
		store()
		wantReject(t, tt.want, "deleteSession", tt.args...)
		checkRecord(t, k.public, "Session:mine", at)
	}
}

func TestVaultStoreSessionArguments(t *testing.T) {
	resetVault(t)
	k := newKey(t, "signing")
	defer mustCall(t, "forget", k.handle)
	r := newKey(t, "recipient")
	defer mustCall(t, "forget", r.handle)
	obj := func(kv ...any) js.Value {
		o := js.Global().Get("Object").New()
		for i := 0; i+1 < len(kv); i += 2 {
			o.Set(kv[i].(string), kv[i+1])
		}
		return o
	}
	now := dateNow()
	const badID = "storeSession: session.sessionId must "
	const badAt = "storeSession: session.expiresAtMs must be a positive number of milliseconds (Date.now())"
	for _, tt := range []struct {
		name    string
		session any
		want    string
	}{
		{"null", js.Null(), "storeSession: session must be an object {sessionId, expiresAtMs}"},
		{"undefined", js.Undefined(), "storeSession: session must be an object {sessionId, expiresAtMs}"},
		{"string", "Session:1", "storeSession: session must be an object {sessionId, expiresAtMs}"},
		{"no sessionId", obj("expiresAtMs", now), badID + "be a string, got undefined"},
		{"numeric sessionId", obj("sessionId", 7, "expiresAtMs", now), badID + "be a string, got number"},
		{"empty sessionId", obj("sessionId", "", "expiresAtMs", now), badID + "not be empty"},
		{"long sessionId", obj("sessionId", strings.Repeat("s", maxSessionID+1), "expiresAtMs", now),
			"storeSession: session.sessionId is longer than 128 bytes"},
		{"no expiresAtMs", obj("sessionId", "Session:1"), badAt},
		{"string expiresAtMs", obj("sessionId", "Session:1", "expiresAtMs", "1700000000000"), badAt},
		{"zero", obj("sessionId", "Session:1", "expiresAtMs", 0), badAt},
		{"negative", obj("sessionId", "Session:1", "expiresAtMs", -1), badAt},
		{"NaN", obj("sessionId", "Session:1", "expiresAtMs", js.Global().Get("NaN")), badAt},
		{"Infinity", obj("sessionId", "Session:1", "expiresAtMs", js.Global().Get("Infinity")), badAt},
		{"2^53", obj("sessionId", "Session:1", "expiresAtMs", float64(1<<53)), badAt},
		{"a Date", obj("sessionId", "Session:1", "expiresAtMs", js.Global().Get("Date").New()), badAt},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantReject(t, tt.want, "storeSession", k.handle, tt.session)
		})
	}
	wantReject(t, "storeSession: this is a recipient key; it cannot sign", "storeSession", r.handle, sessionObject("Session:1", now+1000))
	if n := idbShim.Get("opens").Int(); n != 0 || !vaultRecordValue(t).IsUndefined() {
		t.Fatalf("refused calls opened the database %d times or stored a record", n)
	}
	// A longest-allowed id is fine.
	id := strings.Repeat("s", maxSessionID)
	mustCall(t, "storeSession", k.handle, sessionObject(id, now+1000))
	checkRecord(t, k.public, id, now+1000)
}

// TestVaultUnavailable: where the browser keeps nothing, storeSession and
// resumeSession reject with the reason the page looks for, deleteSession
// resolves false, and the module recovers once storage works.
func TestVaultUnavailable(t *testing.T) {
	k := newKey(t, "signing")
	defer mustCall(t, "forget", k.handle)
	const noVault = "this browser does not let the wallet keep keys"
	for _, tt := range []struct {
		mode   string
		reason string // after noVault + ": "
		// kept: a record is stored first, in "ok" mode. storeFails,
		// resumeFails: what fails in this mode. after: the sessionId of
		// the record at the end, "" for none.
		kept, storeFails, resumeFails bool
		after                         string
	}{
		{"missing", "IndexedDB is not available", false, true, true, ""},
		{"open-error", "InvalidStateError: A mutation operation was attempted on a database that did not allow mutations.", false, true, true, ""},
		{"open-throws", "SecurityError: The operation is insecure.", false, true, true, ""},
		{"blocked", "the wallet's database is held open by an older tab", false, true, true, ""},
		{"open-error", "InvalidStateError: A mutation operation was attempted on a database that did not allow mutations.", true, true, true, "Session:kept"},
		{"commit-aborts", "QuotaExceededError: The shim is out of space.", true, true, false, "Session:kept"},
		{"read-error", "UnknownError: The shim failed the read.", true, false, true, "Session:new"},
	} {
		name := tt.mode
		if tt.kept {
			name += " over a stored session"
		}
		t.Run(name, func(t *testing.T) {
			resetVault(t)
			at := dateNow() + 60_000
			if tt.kept {
				mustCall(t, "storeSession", k.handle, sessionObject("Session:kept", at))
			}
			newTab()
			if tt.mode == "missing" {
				idbShim.Call("uninstall")
			} else {
				idbShim.Set("mode", tt.mode)
			}
			_, err := call(t, "storeSession", k.handle, sessionObject("Session:new", at))
			if want := "storeSession: " + noVault + ": " + tt.reason; tt.storeFails && (err == nil || err.Error() != want) {
				t.Fatalf("storeSession: got %v, want %q", err, want)
			} else if !tt.storeFails && err != nil {
				t.Fatalf("storeSession: %v", err)
			}
			v, err := call(t, "resumeSession")
			if want := "resumeSession: " + noVault + ": " + tt.reason; tt.resumeFails && (err == nil || err.Error() != want) {
				t.Fatalf("resumeSession: got %s, %v; want %q", jsString(v), err, want)
			} else if !tt.resumeFails {
				if err != nil {
					t.Fatalf("resumeSession: %v", err)
				}
				r := checkResumed(t, v, k.public, tt.after, at)
				mustCall(t, "forget", r.handle)
			}
			// Where nothing can be stored or changed, nothing is deleted.
			for _, args := range [][]any{nil, {"Session:kept"}, {"Session:new"}} {
				v := mustCall(t, "deleteSession", args...)
				if v.Type() != js.TypeBoolean || v.Bool() {
					t.Fatalf("deleteSession(%v) = %s, want false", args, jsString(v))
				}
			}
			if tt.after != "" {
				checkRecord(t, k.public, tt.after, at)
			} else if r := vaultRecordValue(t); !r.IsUndefined() {
				t.Fatalf("a record was stored: %s", jsString(r))
			}
			// Storage comes back: no failure is remembered.
			idbShim.Call("reset")
			mustCall(t, "storeSession", k.handle, sessionObject("Session:back", at))
			checkRecord(t, k.public, "Session:back", at)
			r := checkResumed(t, mustCall(t, "resumeSession"), k.public, "Session:back", at)
			mustCall(t, "forget", r.handle)
		})
	}
}

// TestVaultForcedClose: when the browser closes the connection by force
// (site data cleared, the database deleted in the developer tools), the
// next call opens a new one rather than failing on the closed one.
func TestVaultForcedClose(t *testing.T) {
	resetVault(t)
	k := newKey(t, "signing")
	defer mustCall(t, "forget", k.handle)
	at := dateNow() + 60_000
	mustCall(t, "storeSession", k.handle, sessionObject("Session:before", at))
	idbShim.Call("forceClose", idbShim.Get("connections").Index(0))
	// The data outlives the connection.
	r := checkResumed(t, mustCall(t, "resumeSession"), k.public, "Session:before", at)
	mustCall(t, "forget", r.handle)
	mustCall(t, "storeSession", k.handle, sessionObject("Session:after", at))
	checkRecord(t, k.public, "Session:after", at)
	if n := idbShim.Get("opens").Int(); n != 2 {
		t.Fatalf("%d opens, want 2", n)
	}
	// Clearing the site's data closes it and empties the store.
	idbShim.Call("reset")
	if v := mustCall(t, "resumeSession"); !v.IsNull() {
		t.Fatalf("resumeSession after the data was cleared = %s", jsString(v))
	}
	mustCall(t, "storeSession", k.handle, sessionObject("Session:again", at))
	checkRecord(t, k.public, "Session:again", at)
}

// TestVaultVersionChange: when another tab upgrades the database, this
// tab's connection closes and the next call opens a new one.
func TestVaultVersionChange(t *testing.T) {
	resetVault(t)
	k := newKey(t, "signing")
	defer mustCall(t, "forget", k.handle)
	at := dateNow() + 60_000
	mustCall(t, "storeSession", k.handle, sessionObject("Session:v", at))
	first := idbShim.Get("connections").Index(0)
	idbShim.Call("versionChange")
	if !first.Get("_closed").Bool() {
		t.Fatal("the connection was not closed on versionchange")
	}
	vault.mu.Lock()
	stale := vault.db.Truthy()
	vault.mu.Unlock()
	if stale {
		t.Fatal("the module still holds the closed connection")
	}
	r := checkResumed(t, mustCall(t, "resumeSession"), k.public, "Session:v", at)
	mustCall(t, "forget", r.handle)
	if n := idbShim.Get("opens").Int(); n != 2 {
		t.Fatalf("%d opens, want 2", n)
	}
	// The new connection has its own handler.
	idbShim.Call("versionChange")
	if !idbShim.Get("connections").Index(1).Get("_closed").Bool() {
		t.Fatal("the second connection was not closed on versionchange")
	}
	if v := mustCall(t, "deleteSession", "Session:v"); !v.Bool() {
		t.Fatal("deleteSession after a second versionchange = false")
	}
}
