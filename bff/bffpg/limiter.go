package bffpg

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"paywallet/bff"
)

// Limiter is a bff.Limiter in the table bff_login_limits, with the
// semantics of bff.MemoryLimiter: a key's window starts at its first
// attempt and lasts Limit.Window; within it Limit.Max attempts are allowed
// and the rest refused with the time left until it ends. A refused attempt
// changes nothing, so it does not extend the window.
//
//	key          text PRIMARY KEY  -- hex SHA-256 of the BFF's key ("ip:…", "email:…")
//	n            bigint NOT NULL   -- attempts allowed in the window
//	window_end   timestamptz NOT NULL
//	last_allowed boolean NOT NULL  -- the verdict on the latest attempt
//
// last_allowed exists only to carry the verdict out of the statement that
// reached it: RETURNING sees the new row only, and a refused attempt leaves
// n as it was.
//
// Windows are rounded up to a whole microsecond, PostgreSQL's resolution.
// The BFF's keys hold client addresses and e-mail addresses; the table
// keeps only their SHA-256, so a copy of it does not list who tried to
// sign in (an attacker who guesses an address can still confirm it, which
// the counting needs).
type Limiter struct{ s *Store }

var _ bff.Limiter = (*Limiter)(nil)

// Limiter returns the login limiter of s.
func (s *Store) Limiter() *Limiter { return &Limiter{s} }

// allowSQL decides and counts one attempt in a single statement. The row
// lock taken by ON CONFLICT serializes the attempts on a key across every
// instance, and each one sees the row as the one before left it: there is
// no read followed by a write. $1 key, $2 the clock (NULL: now()), $3 the
// window in microseconds, $4 Max (positive).
const allowSQL = `
INSERT INTO bff_login_limits AS l (key, n, window_end, last_allowed)
VALUES ($1, 1, coalesce($2::timestamptz, now()) + $3::bigint * interval '1 microsecond', true)
ON CONFLICT (key) DO UPDATE SET
	n = CASE WHEN l.window_end <= coalesce($2::timestamptz, now()) THEN 1
	         WHEN l.n < $4::bigint THEN l.n + 1
	         ELSE l.n END,
	window_end = CASE WHEN l.window_end <= coalesce($2::timestamptz, now()) THEN EXCLUDED.window_end
	                  ELSE l.window_end END,
	last_allowed = l.window_end <= coalesce($2::timestamptz, now()) OR l.n < $4::bigint
RETURNING last_allowed, window_end, coalesce($2::timestamptz, now())`

// Allow implements bff.Limiter.
//
// A Max of zero or less allows nothing: the attempt is refused without being
// recorded, with the wait of the key's running window if it has one and a
// whole Window otherwise, as bff.MemoryLimiter answers. (The BFF never
// passes such a limit.)
func (lm *Limiter) Allow(ctx context.Context, key string, l bff.Limit) (bool, time.Duration, error) {
	ctx, cancel := lm.s.bound(ctx)
	defer cancel()
	arg := lm.s.clock()
	key = hashKey(key)
	if l.Max <= 0 {
		return lm.refuseAll(ctx, key, l, arg)
	}
	var (
		ok       bool
		end, now time.Time
	)
	err := lm.s.pool.QueryRow(ctx, allowSQL, key, arg, micros(l.Window), int64(l.Max)).Scan(&ok, &end, &now)
	if err != nil {
		return false, 0, lm.s.fail(ctx, "limiter", err)
	}
	if ok {
		return true, 0, nil
	}
	return false, end.Sub(now), nil
}

// hashKey is the stored form of a limiter key.
func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func (lm *Limiter) refuseAll(ctx context.Context, key string, l bff.Limit, arg any) (bool, time.Duration, error) {
	var wait time.Duration
	var end, now time.Time
	err := lm.s.pool.QueryRow(ctx, `
		SELECT window_end, coalesce($2::timestamptz, now()) FROM bff_login_limits
		WHERE key = $1 AND window_end > coalesce($2::timestamptz, now())`, key, arg).Scan(&end, &now)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		wait = l.Window
	case err != nil:
		return false, 0, lm.s.fail(ctx, "limiter", err)
	default:
		wait = end.Sub(now)
	}
	return false, wait, nil
}
