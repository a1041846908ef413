package payments

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/shared/wire"
)

// SecurityEventFilter is the query of ListSecurityEvents.
type SecurityEventFilter struct {
	CustomerID string `query:"customerId"` // required
	Limit      string `query:"limit"`
	Cursor     string `query:"cursor"` // a sequence: the page starts after it, older
}

// ListSecurityEvents pages a customer's security log newest first (GET
// /customers/security-events?customerId=; our extension): the records
// with their place in the customer's chain (sequence, hash,
// previousHash), so that anyone who downloads the log can recompute it
// (service/seclog). 404 for an unknown customer; a deleted customer's log
// stays readable.
func (s *Service) ListSecurityEvents(ctx context.Context, q SecurityEventFilter) (wire.List[wire.SecurityEvent], error) {
	var fe fieldErrors
	customerID := q.CustomerID
	switch {
	case customerID == "":
		fe.add("customerId", "required")
	case !ids.Valid("Customer", customerID):
		fe.add("customerId", "must be a Customer:<uuid> id")
	}
	limit := seqPage(&fe, q.Limit, q.Cursor)
	if e := fe.err(); e != nil {
		return wire.List[wire.SecurityEvent]{}, e
	}
	return read(ctx, s, func(tx store.Tx) (wire.List[wire.SecurityEvent], error) {
		if _, err := loadCustomer(ctx, tx, customerID); err != nil {
			return wire.List[wire.SecurityEvent]{}, err
		}
		page, err := tx.ListSecurityEvents(ctx, store.SecurityEventFilter{CustomerID: customerID, Limit: limit, Cursor: q.Cursor})
		if err != nil {
			return wire.List[wire.SecurityEvent]{}, err
		}
		return listOf(page, func(e *store.SecurityEvent) (wire.SecurityEvent, error) { return securityEventJSON(e) })
	})
}

func securityEventJSON(e *store.SecurityEvent) (wire.SecurityEvent, error) {
	out := wire.SecurityEvent{ID: e.ID, CustomerID: e.CustomerID, AccountID: e.AccountID, Sequence: e.Seq, Type: e.Type,
		CreatedAt: timestamp(e.CreatedAt), Hash: e.Hash, PreviousHash: e.PrevHash}
	if err := json.Unmarshal(e.Details, &out.Details); err != nil {
		return wire.SecurityEvent{}, err
	}
	if out.Details == nil {
		out.Details = map[string]any{}
	}
	return out, nil
}

// SignOutEverywhere is the link of a security e-mail (POST
// /auth/sign-out-everywhere {token}; our extension): it revokes every
// active session of the customer's wallets, each a SESSION_REVOKED record
// (by EMAIL_LINK), and answers how many. A token works once, for 7 days;
// an unknown, used or expired one is 400 naming token. Whoever holds the
// e-mail may sign the person out, nothing more: no session is made and no
// sign-in method changes.
func (s *Service) SignOutEverywhere(ctx context.Context, req wire.SignOutEverywhereRequest, user EndUser) (wire.SignOutEverywhereResponse, error) {
	badToken := invalidField("token", "is not a sign-out link's token, or the link was used or is older than 7 days")
	raw, err := base64.RawURLEncoding.DecodeString(req.Token)
	switch {
	case req.Token == "":
		return wire.SignOutEverywhereResponse{}, invalidField("token", "required")
	case err != nil || len(raw) != 32:
		return wire.SignOutEverywhereResponse{}, badToken
	}
	hash := sha256.Sum256([]byte(req.Token))
	return commit(ctx, s, "", nil, func(tx store.Tx) (wire.SignOutEverywhereResponse, error) {
		now := s.now()
		customerID, err := tx.UseSignOutLink(ctx, hash[:], now)
		if errors.Is(err, store.ErrNotFound) {
			return wire.SignOutEverywhereResponse{}, badToken
		}
		if err != nil {
			return wire.SignOutEverywhereResponse{}, err
		}
		accounts, err := customerAccounts(ctx, tx, customerID)
		if err != nil {
			return wire.SignOutEverywhereResponse{}, err
		}
		n := 0
		for i := range accounts {
			sessions, err := tx.ListActiveSessions(ctx, accounts[i].ID, now)
			if err != nil {
				return wire.SignOutEverywhereResponse{}, err
			}
			for j := range sessions {
				won, err := tx.RevokeSession(ctx, sessions[j].ID, now)
				if err != nil {
					return wire.SignOutEverywhereResponse{}, err
				}
				if !won {
					continue
				}
				n++
				if err := s.recordSecurity(ctx, tx, securityRecord{customerID: customerID, accountID: accounts[i].ID,
					typ: SecuritySessionRevoked, details: map[string]any{"sessionId": sessions[j].ID, "by": RevokedByEmailLink},
					user: &user}); err != nil {
					return wire.SignOutEverywhereResponse{}, err
				}
			}
		}
		return wire.SignOutEverywhereResponse{RevokedSessions: n}, nil
	})
}
