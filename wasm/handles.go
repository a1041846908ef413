//go:build js && wasm

package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"

	"paywallet/shared/walletcrypto"
)

// handleBytes is the number of random bytes in a key handle. A handle is
// their lower-case hex, so JavaScript sees 32 characters.
const handleBytes = 16

var (
	errBadHandle     = errors.New("malformed key handle")
	errUnknownHandle = errors.New("unknown key handle")
)

// keyStore maps opaque handles to private keys. Handles are random, so one
// cannot be derived from another, and they carry no information about the
// key.
type keyStore struct {
	mu   sync.Mutex
	keys map[string]*walletcrypto.PrivateKey
}

func newKeyStore() *keyStore {
	return &keyStore{keys: make(map[string]*walletcrypto.PrivateKey)}
}

// add stores k under a new random handle and returns the handle.
func (s *keyStore) add(k *walletcrypto.PrivateKey) (string, error) {
	var b [handleBytes]byte
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return "", errors.New("no randomness for a key handle")
		}
		h := hex.EncodeToString(b[:])
		if _, taken := s.keys[h]; !taken {
			s.keys[h] = k
			return h, nil
		}
	}
}

// use runs f with the key stored under handle while holding the store's
// lock, so that forget cannot wipe the key while f uses it. f must not call
// back into the store.
func (s *keyStore) use(handle string, f func(*walletcrypto.PrivateKey) error) error {
	if !validHandle(handle) {
		return errBadHandle
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[handle]
	if !ok {
		return errUnknownHandle
	}
	return f(k)
}

// forget wipes the key stored under handle and drops the handle. It reports
// whether there was such a key.
func (s *keyStore) forget(handle string) (bool, error) {
	if !validHandle(handle) {
		return false, errBadHandle
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[handle]
	if !ok {
		return false, nil
	}
	delete(s.keys, handle)
	k.Wipe()
	return true, nil
}

// validHandle reports whether h has the form add produces: 2*handleBytes
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
