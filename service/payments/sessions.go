package payments

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

// ListSessions is the account's active sessions (GET
// /auth/sessions?accountId=): neither expired nor revoked, never with key
// material.
func (s *Service) ListSessions(ctx context.Context, q AccountQuery) (wire.Data[wire.Session], error) {
	accountID := q.AccountID
	if err := checkAccountID(accountID); err != nil {
		return wire.Data[wire.Session]{}, err
	}
	return read(ctx, s, func(tx store.Tx) (wire.Data[wire.Session], error) {
		sessions, err := tx.ListActiveSessions(ctx, accountID, s.now())
		if err != nil {
			return wire.Data[wire.Session]{}, err
		}
		out := wire.Data[wire.Session]{Data: make([]wire.Session, 0, len(sessions))}
		for i := range sessions {
			out.Data = append(out.Data, sessionJSON(&sessions[i]))
		}
		return out, nil
	})
}

// sessionJSON renders a session without key material; issuing responses add
// encryptedSessionSigningKey themselves where the flow delivers one.
func sessionJSON(s *store.Session) wire.Session {
	return wire.Session{
		ID:        s.ID,
		AccountID: s.AccountID,
		Type:      s.Type,
		Nickname:  s.Nickname,
		CreatedAt: timestamp(s.CreatedAt),
		UpdatedAt: timestamp(s.UpdatedAt),
		ExpiresAt: timestamp(s.ExpiresAt),
	}
}

// issuedSession is the answer of a session-issuing call: the session, and
// the sealed session key where the flow delivers one (empty: none).
func issuedSession(sess *store.Session, sealed string) wire.Session {
	out := sessionJSON(sess)
	out.EncryptedSessionSigningKey = sealed
	return out
}

// Signed-retry operations on sessions (grid-api-facts §3.3 "Session APIs").
const (
	opRevokeSession  = "auth.sessions.delete"
	opRefreshSession = "auth.sessions.refresh"
)

// sessionByID loads a session, revoked and expired ones included; a
// malformed or unknown id is 404.
func sessionByID(ctx context.Context, tx store.Tx, id string) (*store.Session, error) {
	missing := errorf(CodeNotFound, "no session with this id")
	if !ids.Valid("Session", id) {
		return nil, missing
	}
	sess, err := tx.GetSession(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, missing
	}
	return sess, err
}

// active reports whether the session is neither revoked nor expired.
func (s *Service) active(sess *store.Session) bool {
	return sess.RevokedAt.IsZero() && s.now().Before(sess.ExpiresAt)
}

// activeSession loads a session that is neither revoked nor expired; any
// other id (malformed, unknown, revoked, expired) is the same 404, as the
// spec's "idempotent at the user intent level" asks.
func (s *Service) activeSession(ctx context.Context, tx store.Tx, id string) (*store.Session, error) {
	sess, err := sessionByID(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if !s.active(sess) {
		return nil, errorf(CodeNotFound, "no active session with this id")
	}
	return sess, nil
}

// activeKeyOf reports whether key is the API key of an active session of
// the account: who may sign the account's signed retries.
func (s *Service) activeKeyOf(ctx context.Context, tx store.Tx, accountID string) func(*walletcrypto.PublicKey) (bool, error) {
	return s.activeKeyExcept(ctx, tx, accountID, "")
}

// activeKeyExcept is activeKeyOf leaving out the sessions that the
// credential exceptCredentialID issued ("" leaves out none).
func (s *Service) activeKeyExcept(ctx context.Context, tx store.Tx, accountID, exceptCredentialID string) func(*walletcrypto.PublicKey) (bool, error) {
	return func(key *walletcrypto.PublicKey) (bool, error) {
		sessions, err := tx.ListActiveSessions(ctx, accountID, s.now())
		if err != nil {
			return false, err
		}
		for i := range sessions {
			if exceptCredentialID != "" && sessions[i].CredentialID == exceptCredentialID {
				continue
			}
			k, err := walletcrypto.ParsePublicKey(sessions[i].PublicKey)
			if err == nil && k.Equal(key) {
				return true, nil
			}
		}
		return false, nil
	}
}

// activity is the payloadToSign of an account operation: canonical JSON in
// the shape of a Turnkey activity (grid-api-facts §4.5), keys sorted,
// organizationId the wallet account. Only its bytes matter: the retry must
// be signed over them exactly, and the challenge binds the request body.
//
// A random nonce makes every payload unique. Without it two first calls with
// the same body in the same millisecond got the same payload, and one stamp
// of the owner completed both challenges: one signature, two transfers out
// of the wallet (TestOneStampCompletesOneChallenge).
func (s *Service) activity(accountID, typ string, params map[string]any) (string, error) {
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", err
	}
	b, err := json.Marshal(map[string]any{
		"nonce":          hex.EncodeToString(nonce[:]),
		"organizationId": accountID,
		"parameters":     params,
		"timestampMs":    strconv.FormatInt(s.now().UnixMilli(), 10),
		"type":           typ,
	})
	return string(b), err
}

// RevokeSession revokes an active session (DELETE /auth/sessions/{id}).
// The first call answers a challenge whose type is the session's credential
// type; the retry, signed by any active session of the same account (the
// session itself included: that is signing out), revokes it, a
// SESSION_REVOKED record (by YOU) of the customer's security log.
func (s *Service) RevokeSession(ctx context.Context, id string, call SignedCall, user EndUser) (Signed[struct{}], error) {
	return commit(ctx, s, "", nil, func(tx store.Tx) (Signed[struct{}], error) {
		sess, err := s.activeSession(ctx, tx, id)
		if err != nil {
			return Signed[struct{}]{}, err
		}
		op := operation{name: opRevokeSession, targetID: sess.ID, accountID: sess.AccountID, bodyHash: call.BodyHash}
		if !call.IsRetry() {
			c, err := s.activityChallenge(ctx, tx, op, sess.Type, "ACTIVITY_TYPE_DELETE_API_KEYS",
				map[string]any{"apiKeyIds": []string{sess.ID}, "userId": sess.AccountID}, nil)
			return challenged[struct{}](c), err
		}
		if _, err := s.completeRetry(ctx, tx, op, call, s.activeKeyOf(ctx, tx, sess.AccountID)); err != nil {
			return Signed[struct{}]{}, err
		}
		if _, err := tx.RevokeSession(ctx, sess.ID, s.now()); err != nil {
			return Signed[struct{}]{}, err
		}
		if err := s.recordSecurity(ctx, tx, securityRecord{accountID: sess.AccountID, typ: SecuritySessionRevoked,
			details: map[string]any{"sessionId": sess.ID, "by": RevokedByYou}, user: &user}); err != nil {
			return Signed[struct{}]{}, err
		}
		return done(struct{}{}), nil
	})
}

// RefreshSession replaces an active session by a new one that lives a full
// SessionTTL (POST /auth/sessions/{id}/refresh, body {clientPublicKey} on
// both legs). The retry must be signed with the key of that very session,
// while it is still active. A compressed clientPublicKey becomes the new
// session's key (client-held); an uncompressed one gets a new key made here
// and sealed to it in encryptedSessionSigningKey. The old session is
// revoked in the same transaction: it has been replaced, and a device keeps
// one session.
func (s *Service) RefreshSession(ctx context.Context, id string, req wire.ChallengeRequest, call SignedCall) (Signed[wire.Session], error) {
	if req.ClientPublicKey == "" {
		return Signed[wire.Session]{}, invalidField("clientPublicKey", "required")
	} else if _, err := walletcrypto.ParseClientPublicKey(req.ClientPublicKey); err != nil {
		return Signed[wire.Session]{}, invalidField("clientPublicKey", clientKeyRule)
	}
	return commit(ctx, s, "", nil, func(tx store.Tx) (Signed[wire.Session], error) {
		// Unknown: 404. Known but revoked or expired: 401 on either leg
		// (grid-api-facts §3.3): the person must sign in again.
		sess, err := sessionByID(ctx, tx, id)
		if err != nil {
			return Signed[wire.Session]{}, err
		}
		if !s.active(sess) {
			return Signed[wire.Session]{}, errorf(CodeUnauthorized, "the session is no longer active; sign in again")
		}
		current, err := walletcrypto.ParsePublicKey(sess.PublicKey)
		if err != nil {
			return Signed[wire.Session]{}, err
		}
		op := operation{name: opRefreshSession, targetID: sess.ID, accountID: sess.AccountID, bodyHash: call.BodyHash}
		if !call.IsRetry() {
			c, err := s.activityChallenge(ctx, tx, op, "", "ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2",
				map[string]any{"targetPublicKey": req.ClientPublicKey}, current)
			return challenged[wire.Session](c), err
		}
		if _, err := s.completeRetry(ctx, tx, op, call, nil); err != nil {
			return Signed[wire.Session]{}, err
		}
		key, sealed, err := s.sessionKey(sec1Of(req.ClientPublicKey))
		if err != nil {
			return Signed[wire.Session]{}, err
		}
		now := s.now()
		fresh := &store.Session{
			ID:           ids.New("Session"),
			AccountID:    sess.AccountID,
			CredentialID: sess.CredentialID,
			Type:         sess.Type,
			Nickname:     sess.Nickname,
			PublicKey:    key.Compressed(),
			CreatedAt:    now,
			UpdatedAt:    now,
			ExpiresAt:    now.Add(s.cfg.SessionTTL),
		}
		if err := tx.CreateSession(ctx, fresh); err != nil {
			return Signed[wire.Session]{}, err
		}
		if _, err := tx.RevokeSession(ctx, sess.ID, now); err != nil {
			return Signed[wire.Session]{}, err
		}
		return done(issuedSession(fresh, sealed)), nil
	})
}
