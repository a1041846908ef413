package bff

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
)

// CookieName is the name of the BFF's session cookie. The __Host- prefix
// makes browsers insist on Secure, Path=/ and no Domain, so no sibling
// subdomain can plant or overwrite it. Chromium treats http://localhost (and
// 127.0.0.1, ::1) as a trustworthy origin for Secure cookies and for the
// prefixes, so the same name works in development without TLS; on any other
// host the BFF must be served over https.
const CookieName = "__Host-wallet"

// Session is what the BFF remembers about one browser. It is stored
// server-side under a hash of the cookie value; the browser only holds the
// random cookie value.
type Session struct {
	// Email is the address the login was started with, as typed (trimmed,
	// letter case kept). The customer is found by its lower-cased form.
	Email string `json:"email"`
	// CustomerID and InternalAccountID are the customer and the embedded
	// wallet account the browser acts for. They are set at login start but
	// grant nothing until WalletSessionID is set.
	CustomerID        string `json:"customerId"`
	InternalAccountID string `json:"internalAccountId"`
	// PendingCredentialID is the EMAIL_OTP credential being verified,
	// between login start and verify.
	PendingCredentialID string `json:"pendingCredentialId,omitempty"`
	// PendingRequestID is the Request-Id of a passkey login's challenge.
	PendingRequestID string `json:"pendingRequestId,omitempty"`
	// RegistrationChallenge is the passkey registration challenge minted
	// for this browser, valid until RegistrationExpiresAt.
	RegistrationChallenge string    `json:"registrationChallenge,omitempty"`
	RegistrationExpiresAt time.Time `json:"registrationExpiresAt,omitzero"`
	// WalletSessionID and WalletSessionExpiresAt describe the service
	// session issued at verify; the browser is signed in while it lasts.
	WalletSessionID        string    `json:"walletSessionId,omitempty"`
	WalletSessionExpiresAt time.Time `json:"walletSessionExpiresAt,omitzero"`
}

// SignedIn reports whether the login completed.
func (s Session) SignedIn() bool { return s.WalletSessionID != "" }

// ErrSessionNotFound is returned by [SessionStore.Get] for a key that is
// absent or expired.
var ErrSessionNotFound = errors.New("bff: session not found")

// SessionStore keeps cookie sessions server-side. Keys are opaque strings
// (the BFF passes a SHA-256 of the cookie value, never the value itself, so
// a leaked store does not leak live cookies). Implementations must be safe
// for concurrent use. [MemoryStore] is the default; a PostgreSQL store lets
// several BFF instances share sessions.
type SessionStore interface {
	// Get returns the session stored under key, or ErrSessionNotFound.
	Get(ctx context.Context, key string) (Session, error)
	// Put stores s under key for ttl, replacing any previous value.
	Put(ctx context.Context, key string, s Session, ttl time.Duration) error
	// Delete removes key; deleting an absent key is not an error.
	Delete(ctx context.Context, key string) error
}

// MemoryStore is a SessionStore and a SignInStore in process memory.
// Sessions are lost on restart and not shared between instances.
type MemoryStore struct {
	now func() time.Time

	mu      sync.Mutex
	m       map[string]memoryEntry
	signIns map[string]signInEntry
	puts    int
}

type signInEntry struct {
	si      SignIn
	expires time.Time
}

type memoryEntry struct {
	s       Session
	expires time.Time
}

// NewMemoryStore returns an empty MemoryStore; now is its clock (time.Now
// when nil).
func NewMemoryStore(now func() time.Time) *MemoryStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryStore{now: now, m: make(map[string]memoryEntry), signIns: make(map[string]signInEntry)}
}

// Get implements SessionStore.
func (m *MemoryStore) Get(_ context.Context, key string) (Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[key]
	if !ok {
		return Session{}, ErrSessionNotFound
	}
	if !m.now().Before(e.expires) {
		delete(m.m, key)
		return Session{}, ErrSessionNotFound
	}
	return e.s, nil
}

// Put implements SessionStore. Every 256th Put also drops expired entries.
func (m *MemoryStore) Put(_ context.Context, key string, s Session, ttl time.Duration) error {
	if ttl <= 0 {
		return errors.New("bff: session ttl must be positive")
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m[key] = memoryEntry{s: s, expires: now.Add(ttl)}
	m.countPutLocked(now)
	return nil
}

// countPutLocked counts a Put or a PutSignIn; every 256th drops the
// expired entries of both maps.
func (m *MemoryStore) countPutLocked(now time.Time) {
	m.puts++
	if m.puts%256 != 0 {
		return
	}
	for k, e := range m.m {
		if !now.Before(e.expires) {
			delete(m.m, k)
		}
	}
	for k, e := range m.signIns {
		if !now.Before(e.expires) {
			delete(m.signIns, k)
		}
	}
}

// PutSignIn implements SignInStore. The User-Agent is cut to MaxUserAgent
// bytes here too, so the bound holds whoever calls.
func (m *MemoryStore) PutSignIn(_ context.Context, sessionID string, si SignIn, ttl time.Duration) error {
	if ttl <= 0 {
		return errors.New("bff: sign-in ttl must be positive")
	}
	si.UserAgent = CleanUserAgent(si.UserAgent)
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.signIns[sessionID] = signInEntry{si: si, expires: now.Add(ttl)}
	m.countPutLocked(now)
	return nil
}

// SignIns implements SignInStore.
func (m *MemoryStore) SignIns(_ context.Context, sessionIDs []string) (map[string]SignIn, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]SignIn)
	for _, id := range sessionIDs {
		if e, ok := m.signIns[id]; ok && now.Before(e.expires) {
			out[id] = e.si
		}
	}
	return out, nil
}

// DeleteSignIn implements SignInStore.
func (m *MemoryStore) DeleteSignIn(_ context.Context, sessionID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.signIns, sessionID)
	return nil
}

// Delete implements SessionStore.
func (m *MemoryStore) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, key)
	return nil
}

// Len returns the number of stored entries, expired ones included until
// they are swept.
func (m *MemoryStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}

var (
	_ SessionStore = (*MemoryStore)(nil)
	_ SignInStore  = (*MemoryStore)(nil)
)

// pendingLoginTTL bounds a login that was started and not verified.
const pendingLoginTTL = 15 * time.Minute

// cookieSession is the session of the current request, loaded by
// loadSession for every /api request.
type cookieSession struct {
	id   string // cookie value; "" when anonymous
	data Session
}

func (cs *cookieSession) signedIn() bool { return cs.id != "" && cs.data.SignedIn() }

const localsSession = "bff.session"

func newSessionID() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// storeKey is the store key of a cookie value.
func storeKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// wellFormedID reports whether v can be a cookie value the BFF issued: 32
// random bytes in unpadded base64url.
func wellFormedID(v string) bool {
	if len(v) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.Strict().DecodeString(v)
	return err == nil
}

// loadSession resolves the cookie to a server-side session. A cookie the
// store does not know (expired, logged out elsewhere, forged) makes the
// request anonymous and is cleared.
func (s *Server) loadSession(c *fiber.Ctx) error {
	cs := &cookieSession{}
	c.Locals(localsSession, cs)
	v := c.Cookies(CookieName)
	if v == "" {
		return c.Next()
	}
	if !wellFormedID(v) {
		clearCookie(c)
		return c.Next()
	}
	data, err := s.store.Get(c.UserContext(), storeKey(v))
	switch {
	case errors.Is(err, ErrSessionNotFound):
		clearCookie(c)
	case err != nil:
		return s.storeFailed(c.UserContext(), "session store", err)
	default:
		cs.id, cs.data = v, data
	}
	return c.Next()
}

func currentSession(c *fiber.Ctx) *cookieSession {
	if cs, ok := c.Locals(localsSession).(*cookieSession); ok {
		return cs
	}
	return &cookieSession{}
}

// signedIn returns the session of a signed-in browser or the 401 answer.
// A session whose wallet session has ended (expired, or no longer listed
// by the service: liveness.go) is ended here.
func (s *Server) signedIn(c *fiber.Ctx) (*cookieSession, error) {
	cs := currentSession(c)
	if !cs.signedIn() {
		return nil, errSignedOut
	}
	alive := s.now().Before(cs.data.WalletSessionExpiresAt)
	if alive {
		var err error
		if alive, err = s.live.alive(c.UserContext(), cs.data.InternalAccountID, cs.data.WalletSessionID); err != nil {
			return nil, err
		}
	}
	if !alive {
		s.forgetSignIn(c.UserContext(), cs.data.WalletSessionID)
		if err := s.endSession(c); err != nil {
			return nil, err
		}
		return nil, errSignedOut
	}
	return cs, nil
}

// updateSession stores new data for the signed-in cookie session cs, kept
// until its wallet session ends. The cookie value does not change: nothing
// new is granted, and requests of the same browser already in flight carry
// the current value.
func (s *Server) updateSession(c *fiber.Ctx, cs *cookieSession, data Session) error {
	if err := s.store.Put(c.UserContext(), storeKey(cs.id), data, data.WalletSessionExpiresAt.Sub(s.now())); err != nil {
		return err
	}
	cs.data = data
	// The same value, kept by the browser as long as the entry now lives.
	setCookie(c, cs.id, data.WalletSessionExpiresAt.Sub(s.now()))
	return nil
}

// startSession stores data under a fresh random id and sets the cookie to
// it, deleting the request's previous session if there was one. It is the
// only way a cookie value is issued, so every login step rotates the id.
func (s *Server) startSession(c *fiber.Ctx, data Session, ttl time.Duration) error {
	cs := currentSession(c)
	id, err := newSessionID()
	if err != nil {
		return err
	}
	if err := s.store.Put(c.UserContext(), storeKey(id), data, ttl); err != nil {
		return err
	}
	if cs.id != "" {
		if err := s.store.Delete(c.UserContext(), storeKey(cs.id)); err != nil {
			s.log.WarnContext(c.UserContext(), "bff: deleting rotated session", slog.Any("err", err))
		}
	}
	cs.id, cs.data = id, data
	setCookie(c, id, ttl)
	return nil
}

// endSession deletes the request's session and clears the cookie.
func (s *Server) endSession(c *fiber.Ctx) error {
	cs := currentSession(c)
	if cs.id != "" {
		if err := s.store.Delete(c.UserContext(), storeKey(cs.id)); err != nil {
			return err
		}
	}
	*cs = cookieSession{}
	clearCookie(c)
	return nil
}

// setCookie sets the session cookie to last as long as its server-side
// entry (the wallet session's end, or a pending login's): a browser
// restarted within the session comes back signed in, as the wallet page,
// whose key outlives the tab in IndexedDB, expects; after that the cookie
// is worth nothing anyway. It is a Max-Age, counted by the browser from
// when it receives the cookie, not an Expires date: a device whose clock is
// off would otherwise drop the cookie early (or at once). The server-side
// entry still decides.
func setCookie(c *fiber.Ctx, id string, ttl time.Duration) {
	c.Cookie(&fiber.Cookie{
		Name:     CookieName,
		Value:    id,
		Path:     "/",
		Secure:   true,
		HTTPOnly: true,
		SameSite: fiber.CookieSameSiteStrictMode,
		MaxAge:   max(int(ttl/time.Second), 1),
	})
}

// clearCookie expires the cookie. A __Host- cookie is only replaced by one
// with the same attributes, so the deletion carries them too.
func clearCookie(c *fiber.Ctx) {
	c.Cookie(&fiber.Cookie{
		Name:     CookieName,
		Value:    "",
		Path:     "/",
		Secure:   true,
		HTTPOnly: true,
		SameSite: fiber.CookieSameSiteStrictMode,
		Expires:  time.Unix(0, 0).UTC(),
	})
}
