package service

import (
	"net/http"

	"paywallet/service/store"
	"paywallet/shared/wire"
)

// listSessions handles GET /auth/sessions?accountId=: the account's active
// sessions (neither expired nor revoked), never with key material.
func (s *Service) listSessions(w http.ResponseWriter, r *http.Request) error {
	accountID, err := accountIDParam(r)
	if err != nil {
		return err
	}
	var sessions []store.Session
	err = s.store.Tx(r.Context(), func(tx store.Tx) error {
		var err error
		sessions, err = tx.ListActiveSessions(r.Context(), accountID, s.now())
		return err
	})
	if err != nil {
		return err
	}
	out := wire.Data[wire.Session]{Data: make([]wire.Session, 0, len(sessions))}
	for i := range sessions {
		out.Data = append(out.Data, sessionJSON(&sessions[i]))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
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
