package bffpg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"paywallet/bff"
)

// Sessions is a bff.SessionStore in the table bff_sessions:
//
//	key        text PRIMARY KEY  -- as the BFF passes it (a SHA-256 of the cookie)
//	data       bytea NOT NULL    -- the bff.Session, JSON-encoded
//	expires_at timestamptz NOT NULL
//
// The session is kept as JSON in a bytea rather than a jsonb: jsonb refuses
// some valid JSON (a string holding U+0000), and nothing queries inside it.
// Keys must be valid UTF-8 without NUL bytes, as every text value in
// PostgreSQL; the BFF's hex digests are.
type Sessions struct{ s *Store }

var _ bff.SessionStore = (*Sessions)(nil)

// Sessions returns the session store of s.
func (s *Store) Sessions() *Sessions { return &Sessions{s} }

// Get implements bff.SessionStore: an expired row is absent
// (bff.ErrSessionNotFound) even before it is swept.
func (ss *Sessions) Get(ctx context.Context, key string) (bff.Session, error) {
	ctx, cancel := ss.s.bound(ctx)
	defer cancel()
	arg := ss.s.clock()
	var data []byte
	err := ss.s.pool.QueryRow(ctx,
		`SELECT data FROM bff_sessions WHERE key = $1 AND expires_at > coalesce($2::timestamptz, now())`,
		key, arg).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return bff.Session{}, bff.ErrSessionNotFound
	}
	if err != nil {
		return bff.Session{}, ss.s.fail(ctx, "get session", err)
	}
	var out bff.Session
	if err := json.Unmarshal(data, &out); err != nil {
		return bff.Session{}, fmt.Errorf("bffpg: session %q is not readable: %w", key, err)
	}
	return out, nil
}

// Put implements bff.SessionStore: it inserts or replaces the row, to
// expire ttl from now (rounded up to a microsecond). A ttl that is not
// positive is refused, as bff.MemoryStore does.
func (ss *Sessions) Put(ctx context.Context, key string, s bff.Session, ttl time.Duration) error {
	ctx, cancel := ss.s.bound(ctx)
	defer cancel()
	if ttl <= 0 {
		return errors.New("bffpg: session ttl must be positive")
	}
	data, err := json.Marshal(s)
	if err != nil {
		return ss.s.fail(ctx, "put session", err)
	}
	arg := ss.s.clock()
	_, err = ss.s.pool.Exec(ctx, `
		INSERT INTO bff_sessions (key, data, expires_at)
		VALUES ($1, $2, coalesce($3::timestamptz, now()) + $4::bigint * interval '1 microsecond')
		ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data, expires_at = EXCLUDED.expires_at`,
		key, data, arg, micros(ttl))
	if err != nil {
		return ss.s.fail(ctx, "put session", err)
	}
	return nil
}

// Delete implements bff.SessionStore; deleting an absent key is not an
// error.
func (ss *Sessions) Delete(ctx context.Context, key string) error {
	ctx, cancel := ss.s.bound(ctx)
	defer cancel()
	if _, err := ss.s.pool.Exec(ctx, `DELETE FROM bff_sessions WHERE key = $1`, key); err != nil {
		return ss.s.fail(ctx, "delete session", err)
	}
	return nil
}

// bff_sign_ins holds the bff.SignInStore of [Sessions]: the User-Agent each
// wallet session was signed in with, for the Security view's device names.
//
//	key          text PRIMARY KEY  -- the wallet session id
//	user_agent   text NOT NULL     -- at most bff.MaxUserAgent bytes (a CHECK)
//	signed_in_at timestamptz NOT NULL
//	expires_at   timestamptz NOT NULL
//
// The expiry is the database's clock plus the ttl, as for cookie sessions;
// signed_in_at is the BFF's clock at sign-in, shown only, never compared.

var _ bff.SignInStore = (*Sessions)(nil)

// PutSignIn implements bff.SignInStore. The User-Agent is cut to
// bff.MaxUserAgent bytes of printable ASCII before it is stored, so the
// table's bound holds whoever calls.
func (ss *Sessions) PutSignIn(ctx context.Context, sessionID string, si bff.SignIn, ttl time.Duration) error {
	ctx, cancel := ss.s.bound(ctx)
	defer cancel()
	if ttl <= 0 {
		return errors.New("bffpg: sign-in ttl must be positive")
	}
	arg := ss.s.clock()
	_, err := ss.s.pool.Exec(ctx, `
		INSERT INTO bff_sign_ins (key, user_agent, signed_in_at, expires_at)
		VALUES ($1, $2, $3, coalesce($4::timestamptz, now()) + $5::bigint * interval '1 microsecond')
		ON CONFLICT (key) DO UPDATE SET user_agent = EXCLUDED.user_agent,
			signed_in_at = EXCLUDED.signed_in_at, expires_at = EXCLUDED.expires_at`,
		sessionID, bff.CleanUserAgent(si.UserAgent), si.At, arg, micros(ttl))
	if err != nil {
		return ss.s.fail(ctx, "put sign-in", err)
	}
	return nil
}

// SignIns implements bff.SignInStore: expired rows are absent even before
// they are swept.
func (ss *Sessions) SignIns(ctx context.Context, sessionIDs []string) (map[string]bff.SignIn, error) {
	ctx, cancel := ss.s.bound(ctx)
	defer cancel()
	out := make(map[string]bff.SignIn)
	if len(sessionIDs) == 0 {
		return out, nil
	}
	arg := ss.s.clock()
	rows, err := ss.s.pool.Query(ctx,
		`SELECT key, user_agent, signed_in_at FROM bff_sign_ins
		WHERE key = ANY($1) AND expires_at > coalesce($2::timestamptz, now())`,
		sessionIDs, arg)
	if err != nil {
		return nil, ss.s.fail(ctx, "get sign-ins", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var si bff.SignIn
		if err := rows.Scan(&id, &si.UserAgent, &si.At); err != nil {
			return nil, ss.s.fail(ctx, "get sign-ins", err)
		}
		out[id] = si
	}
	if err := rows.Err(); err != nil {
		return nil, ss.s.fail(ctx, "get sign-ins", err)
	}
	return out, nil
}

// DeleteSignIn implements bff.SignInStore; deleting an absent id is not an
// error.
func (ss *Sessions) DeleteSignIn(ctx context.Context, sessionID string) error {
	ctx, cancel := ss.s.bound(ctx)
	defer cancel()
	if _, err := ss.s.pool.Exec(ctx, `DELETE FROM bff_sign_ins WHERE key = $1`, sessionID); err != nil {
		return ss.s.fail(ctx, "delete sign-in", err)
	}
	return nil
}
