//go:build js && wasm

package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"syscall/js"
	"time"

	"paywallet/shared/walletcrypto"
)

// handleBytes is the number of random bytes in a handle. A handle is their
// lower-case hex, so JavaScript sees 32 characters.
const handleBytes = 16

// maxTimerDelay is the longest delay setTimeout honours (2^31-1 ms, about
// 24.8 days); a longer one would fire at once. Later expiries are reached
// by scheduling again.
const maxTimerDelay = 1<<31 - 1

var (
	errBadHandle     = errors.New("malformed key handle")
	errUnknownHandle = errors.New("unknown key handle")
	errUnknownSecret = errors.New("unknown secret handle")
	errUnknown       = errors.New("unknown handle")
)

// purpose is what a key may do. WebCrypto fixes it when the key is made
// (usages ["sign"] or ["deriveBits"]); the store checks it first so that
// the page gets a clear reason rather than WebCrypto's InvalidAccessError.
type purpose int

const (
	purposeSigning   purpose = iota + 1 // ECDSA: stamps, the OTP client key, session keys
	purposeRecipient                    // ECDH: the HPKE recipient of an export or a sealed session key
)

func (p purpose) String() string {
	if p == purposeRecipient {
		return "recipient"
	}
	return "signing"
}

// errWrongPurpose is returned by get when a handle's key is of the other
// purpose.
func errWrongPurpose(want purpose) error {
	if want == purposeRecipient {
		return errors.New("this is a signing key; use a key made with generateKey(\"recipient\")")
	}
	return errors.New("this is a recipient key; it cannot sign")
}

// keyStore maps opaque handles to the module's keys and to secrets opened
// from export bundles. A key is a non-extractable CryptoKey: the store
// holds the reference, never bytes. Handles are random, so one cannot be
// derived from another, and they carry no information about what they
// stand for. Keys and secrets share the map, so no handle names both; each
// lookup asks for one kind, so a secret handle is unknown as a key handle
// and the other way round.
type keyStore struct {
	mu      sync.Mutex
	entries map[string]*entry
}

// entry is one stored key or secret.
type entry struct {
	key    *key // set for a key handle; nil for a secret handle
	secret []byte

	expiry int64    // Date.now() milliseconds from which the entry is gone; 0: never
	timer  js.Value // setTimeout id of the scheduled wipe; undefined: none
	fire   js.Func  // the timer's callback, released with it
	gen    int      // counts timers, so a stale one is recognised
}

func newKeyStore() *keyStore {
	return &keyStore{entries: make(map[string]*entry)}
}

// key is a private CryptoKey with what the module knows about it.
type key struct {
	private js.Value // the CryptoKey: type "private", extractable false
	public  *walletcrypto.PublicKey
	purpose purpose

	// The stamp finisher (fast.go), made on the first stamp.
	once         sync.Once
	id           int
	finish, fail js.Value
}

// add stores k under a new random handle and returns the handle.
func (s *keyStore) add(k *key) (string, error) {
	return s.put(&entry{key: k})
}

// addSecret stores b under a new random handle and returns the handle. The
// store owns b from then on and zeroes it when the handle goes.
func (s *keyStore) addSecret(b []byte) (string, error) {
	return s.put(&entry{secret: b})
}

func (s *keyStore) put(e *entry) (string, error) {
	var b [handleBytes]byte
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if err := handleRandom.read(b[:]); err != nil {
			return "", errors.New("no randomness for a handle")
		}
		h := hex.EncodeToString(b[:])
		if _, taken := s.entries[h]; !taken {
			s.entries[h] = e
			return h, nil
		}
	}
}

// get returns the key stored under handle, which must have purpose p. A
// call that got the key before a forget finishes with it (a CryptoKey
// cannot be wiped, only let go; a stamp under way keeps its finisher).
func (s *keyStore) get(handle string, p purpose) (*key, error) {
	if !validHandle(handle) {
		return nil, errBadHandle
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.live(handle)
	if e == nil || e.key == nil {
		return nil, errUnknownHandle
	}
	if e.key.purpose != p {
		return nil, errWrongPurpose(p)
	}
	return e.key, nil
}

// useSecret is use for a secret handle.
func (s *keyStore) useSecret(handle string, f func([]byte) error) error {
	if !validHandle(handle) {
		return errBadHandle
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.live(handle)
	if e == nil || e.key != nil {
		return errUnknownSecret
	}
	return f(e.secret)
}

// forget wipes the key or secret stored under handle and drops the handle.
// It reports whether there was one (an expired one no longer counts).
func (s *keyStore) forget(handle string) (bool, error) {
	if !validHandle(handle) {
		return false, errBadHandle
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.live(handle)
	if e == nil {
		return false, nil
	}
	s.drop(handle, e)
	return true, nil
}

// setExpiry makes the key or secret under handle expire at the Date.now()
// time at (milliseconds), replacing any earlier expiry. From then on the
// handle is unknown; a timer also wipes it then, so that it does not wait in
// memory for the next call. A time already past wipes it at once, and
// setExpiry reports false.
func (s *keyStore) setExpiry(handle string, at int64) (bool, error) {
	if !validHandle(handle) {
		return false, errBadHandle
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.live(handle)
	if e == nil {
		return false, errUnknown
	}
	s.stopTimer(e)
	e.expiry = at
	if s.live(handle) == nil {
		return false, nil
	}
	s.schedule(handle, e)
	return true, nil
}

// live returns the entry under handle, or nil if there is none or it has
// expired, in which case it is dropped. The caller holds s.mu.
func (s *keyStore) live(handle string) *entry {
	e := s.entries[handle]
	if e != nil && e.expiry != 0 && time.Now().UnixMilli() >= e.expiry {
		s.drop(handle, e)
		return nil
	}
	return e
}

// drop removes e, stored under handle, wipes it and cancels its timer. The
// caller holds s.mu.
func (s *keyStore) drop(handle string, e *entry) {
	delete(s.entries, handle)
	s.stopTimer(e)
	// A CryptoKey has no bytes here to wipe: dropping the last reference
	// lets the browser free it.
	if e.key != nil {
		e.key.release()
	}
	e.key = nil
	clear(e.secret)
}

// schedule sets a timer that wipes e when it expires. The caller holds s.mu.
func (s *keyStore) schedule(handle string, e *entry) {
	e.gen++
	gen := e.gen
	// The callback runs on the JavaScript event loop, where blocking on the
	// store's lock could stall the page: hand the work to a goroutine.
	e.fire = js.FuncOf(func(js.Value, []js.Value) any {
		go s.timerFired(handle, e, gen)
		return nil
	})
	delay := min(max(e.expiry-time.Now().UnixMilli(), 0), maxTimerDelay)
	e.timer = js.Global().Call("setTimeout", e.fire, delay)
}

// timerFired handles the timer numbered gen of e: it drops e if e has
// expired, and otherwise (a delay longer than a timer allows, or a timer a
// little early) schedules again. A timer replaced in the meantime is ignored.
func (s *keyStore) timerFired(handle string, e *entry, gen int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries[handle] != e || e.gen != gen {
		return
	}
	s.stopTimer(e)
	if s.live(handle) != nil {
		s.schedule(handle, e)
	}
}

// stopTimer cancels e's timer, if any, and releases its callback. The
// caller holds s.mu.
func (s *keyStore) stopTimer(e *entry) {
	if e.timer.IsUndefined() {
		return
	}
	js.Global().Call("clearTimeout", e.timer)
	e.fire.Release()
	e.timer, e.fire = js.Undefined(), js.Func{}
}

// validHandle reports whether h has the form put produces: 2*handleBytes
// lower-case hex digits.
func validHandle(h string) bool {
	if len(h) != 2*handleBytes {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// handleRandom hands out the random bytes of handles from a pool filled
// 512 bytes at a time: crypto/rand under js/wasm calls
// crypto.getRandomValues through syscall/js on every read, which costs
// more than the rest of making a handle. The caller holds keyStore.mu.
var handleRandom randomPool

type randomPool struct {
	buf  [512]byte
	left int // unread bytes at the end of buf
}

func (p *randomPool) read(b []byte) error {
	if p.left < len(b) {
		if _, err := rand.Read(p.buf[:]); err != nil {
			return err
		}
		p.left = len(p.buf)
	}
	from := len(p.buf) - p.left
	copy(b, p.buf[from:from+len(b)])
	clear(p.buf[from : from+len(b)]) // each byte is handed out once
	p.left -= len(b)
	return nil
}
