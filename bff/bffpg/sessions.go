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
	arg := ss.s.clock()
	var data []byte
	err := ss.s.pool.QueryRow(ctx,
		`SELECT data FROM bff_sessions WHERE key = $1 AND expires_at > coalesce($2::timestamptz, now())`,
		key, arg).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return bff.Session{}, bff.ErrSessionNotFound
	}
	if err != nil {
		return bff.Session{}, fmt.Errorf("bffpg: get session: %w", err)
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
	if ttl <= 0 {
		return errors.New("bffpg: session ttl must be positive")
	}
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("bffpg: put session: %w", err)
	}
	arg := ss.s.clock()
	_, err = ss.s.pool.Exec(ctx, `
		INSERT INTO bff_sessions (key, data, expires_at)
		VALUES ($1, $2, coalesce($3::timestamptz, now()) + $4::bigint * interval '1 microsecond')
		ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data, expires_at = EXCLUDED.expires_at`,
		key, data, arg, micros(ttl))
	if err != nil {
		return fmt.Errorf("bffpg: put session: %w", err)
	}
	return nil
}

// Delete implements bff.SessionStore; deleting an absent key is not an
// error.
func (ss *Sessions) Delete(ctx context.Context, key string) error {
	if _, err := ss.s.pool.Exec(ctx, `DELETE FROM bff_sessions WHERE key = $1`, key); err != nil {
		return fmt.Errorf("bffpg: delete session: %w", err)
	}
	return nil
}
