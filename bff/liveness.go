package bff

import (
	"context"
	"sync"
	"time"

	"paywallet/shared/wire"
)

// A cookie grants what its wallet session grants, and no longer: once the
// service stops listing the session (revoked from another device, replaced
// by a refresh, expired, or its account gone), every /api route must answer
// 401, with one BFF or several. The BFF learns it by asking: signedIn checks
// the session against the service's list of the account's active sessions,
// GET /auth/sessions?accountId=…, remembered for at most
// DefaultSessionCheck. Every instance asks for itself, so none can lag by
// more than that (plus one request's time), and nothing has to be told.
//
// One listing answers for every session of the account, and concurrent
// requests of an account share one call. A session missing from a listing
// that predates it (just signed in, just refreshed) is looked up again
// before it is refused.

// DefaultSessionCheck is how long an answer of the service about an
// account's sessions is trusted.
const DefaultSessionCheck = 500 * time.Millisecond

// liveSessions remembers the service's latest answer per account.
type liveSessions struct {
	ttl  time.Duration
	list func(ctx context.Context, accountID string) ([]wire.Session, error)

	mu       sync.Mutex
	accounts map[string]*liveAccount
	sweepAt  int // len(accounts) at which stale entries are dropped
}

// liveAccount is one account's latest listing, or the listing under way.
type liveAccount struct {
	at      time.Time           // when the listing was asked for
	ids     map[string]struct{} // the active sessions it listed
	pending chan struct{}       // closed when a listing under way ends
	err     error               // the failure of the listing under way
}

func newLiveSessions(ttl time.Duration, list func(context.Context, string) ([]wire.Session, error)) *liveSessions {
	return &liveSessions{ttl: ttl, list: list, accounts: map[string]*liveAccount{}, sweepAt: 1024}
}

// alive reports whether the service lists sessionID among accountID's
// active sessions, by an answer at most l.ttl old. An error means the
// service could not be asked: the caller refuses the request rather than
// honour a session it cannot vouch for.
func (l *liveSessions) alive(ctx context.Context, accountID, sessionID string) (bool, error) {
	ids, at, err := l.listing(ctx, accountID, time.Time{})
	if err != nil {
		return false, err
	}
	if _, ok := ids[sessionID]; ok {
		return true, nil
	}
	// Perhaps the listing predates the session: ask once more, for an
	// answer newer than that listing.
	ids, _, err = l.listing(ctx, accountID, at)
	if err != nil {
		return false, err
	}
	_, ok := ids[sessionID]
	return ok, nil
}

// listing returns the account's active session ids from a listing asked
// for after notBefore and within the last l.ttl, asking the service if
// there is none (one call at a time per account).
func (l *liveSessions) listing(ctx context.Context, accountID string, notBefore time.Time) (map[string]struct{}, time.Time, error) {
	for {
		l.mu.Lock()
		e := l.accounts[accountID]
		switch {
		case e != nil && e.pending != nil:
			// A listing is under way: wait for it, then look again.
			wait := e.pending
			l.mu.Unlock()
			select {
			case <-wait:
			case <-ctx.Done():
				return nil, time.Time{}, ctx.Err()
			}
			continue
		case e != nil && time.Since(e.at) < l.ttl && e.at.After(notBefore):
			ids, at := e.ids, e.at
			l.mu.Unlock()
			return ids, at, nil
		}
		mine := &liveAccount{at: time.Now(), pending: make(chan struct{})}
		l.accounts[accountID] = mine
		l.sweepLocked()
		l.mu.Unlock()

		sessions, err := l.list(ctx, accountID)
		ids := make(map[string]struct{}, len(sessions))
		for _, s := range sessions {
			ids[s.ID] = struct{}{}
		}
		l.mu.Lock()
		if err != nil {
			// Nothing is remembered of a failed listing; those waiting on
			// it ask again.
			delete(l.accounts, accountID)
		} else {
			mine.ids = ids
		}
		close(mine.pending)
		mine.pending = nil
		l.mu.Unlock()
		if err != nil {
			return nil, time.Time{}, err
		}
		return ids, mine.at, nil
	}
}

// forget drops what is remembered of accountID, so that the next request
// asks the service (after this BFF revoked one of its sessions).
func (l *liveSessions) forget(accountID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.accounts[accountID]; e != nil && e.pending == nil {
		delete(l.accounts, accountID)
	}
}

// sweepLocked drops stale listings once the map has doubled since the last
// sweep, so that it holds about as many accounts as are active. The caller
// holds l.mu.
func (l *liveSessions) sweepLocked() {
	if len(l.accounts) < l.sweepAt {
		return
	}
	for id, e := range l.accounts {
		if e.pending == nil && time.Since(e.at) >= l.ttl {
			delete(l.accounts, id)
		}
	}
	l.sweepAt = max(1024, 2*len(l.accounts))
}
