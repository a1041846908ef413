package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"paywallet/service/store"
)

// This file implements store.ExternalAccountTx: external accounts, agents,
// their device codes and their access tokens. The tables are created by
// migrations/<dialect>/0002_external_accounts.sql.

var _ store.ExternalAccountTx = (*tx)(nil)

// ---- external accounts

// The owner column is generated from customer_id and so is never written.
const externalAccountCols = `id, customer_id, platform_account_id, currency, account_type, account_info, status,
	ownership_type, default_uma_deposit_account, beneficiary_verification_status, beneficiary_verified_data,
	fingerprint, created_at, updated_at`

func scanExternalAccount(s scanner) (store.ExternalAccount, error) {
	var a store.ExternalAccount
	err := s.Scan(&a.ID, optStringCol{&a.CustomerID}, &a.PlatformAccountID, &a.Currency, &a.AccountType,
		exactBytesCol{&a.AccountInfo}, &a.Status, &a.OwnershipType, &a.DefaultUmaDepositAccount,
		&a.BeneficiaryVerificationStatus, exactBytesCol{&a.BeneficiaryVerifiedData}, bytesCol{&a.Fingerprint},
		timeCol{&a.CreatedAt}, timeCol{&a.UpdatedAt})
	return a, err
}

// ownerOf is the value of the owner column for an account of customerID:
// the customer id, or "" for the platform (see the migration).
func ownerOf(customerID string) string { return customerID }

// CreateExternalAccount inserts the account with the default flag off and,
// only if the row went in and a.DefaultUmaDepositAccount is set, then takes
// the flag from the owner's previous default and gives it to the new
// account. A refused insert (taken id, or the owner already has the
// fingerprint) therefore changes nothing, even if the caller goes on and
// commits.
//
// The previous default's UpdatedAt becomes a.CreatedAt: losing the flag is a
// change of that account.
//
// Two transactions creating defaults for one owner at once cannot both
// commit: the partial unique index external_accounts_owner_default refuses
// the second flag. On PostgreSQL the loser fails with a serialization
// failure or that unique violation; both mark the transaction as having lost
// a race, so Store.Tx runs fn again, and the rerun moves the flag from the
// winner's account.
func (t *tx) CreateExternalAccount(ctx context.Context, a *store.ExternalAccount) error {
	what := fmt.Sprintf("create external account %q", a.ID)
	if err := t.insert(ctx, what,
		`INSERT INTO external_accounts (`+externalAccountCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, optString(a.CustomerID), a.PlatformAccountID, a.Currency, a.AccountType, exactBlob(a.AccountInfo),
		a.Status, a.OwnershipType, false, a.BeneficiaryVerificationStatus, exactBlob(a.BeneficiaryVerifiedData),
		blob(a.Fingerprint), t.d.timeArg(a.CreatedAt), t.d.timeArg(a.UpdatedAt)); err != nil {
		return err
	}
	if !a.DefaultUmaDepositAccount {
		return nil
	}
	if _, err := t.exec(ctx, `UPDATE external_accounts SET default_uma_deposit_account = ?, updated_at = ?
		WHERE owner = ? AND default_uma_deposit_account AND id <> ?`,
		false, t.d.timeArg(a.CreatedAt), ownerOf(a.CustomerID), a.ID); err != nil {
		return t.fail(what+": clear the previous default", err)
	}
	if _, err := t.exec(ctx, `UPDATE external_accounts SET default_uma_deposit_account = ? WHERE id = ?`,
		true, a.ID); err != nil {
		if t.d.classify(err) == errUnique {
			// Another transaction made a default for this owner after
			// this one's snapshot: a lost race, not a duplicate.
			t.lostRace = true
			return fmt.Errorf("store: %s: another default was set concurrently: %w", what, err)
		}
		return t.fail(what+": set the default", err)
	}
	return nil
}

// GetExternalAccount reads one account by id; ErrNotFound if there is none.
func (t *tx) GetExternalAccount(ctx context.Context, id string) (*store.ExternalAccount, error) {
	a, err := scanExternalAccount(t.queryRow(ctx,
		`SELECT `+externalAccountCols+` FROM external_accounts WHERE id = ?`, id))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("external account %q", id), err)
	}
	return &a, nil
}

// errScope is returned by ListExternalAccounts for a filter without exactly
// one scope. It is neither ErrNotFound nor ErrConflict: such a filter is a
// mistake of the caller.
var errScope = errors.New("store: list external accounts: set exactly one of CustomerID, Platform and AllCustomers")

// ListExternalAccounts pages through one owner's accounts by id. Both scopes
// compare the generated owner column ("" for the platform), so they use the
// same indexes.
func (t *tx) ListExternalAccounts(ctx context.Context, f store.ExternalAccountFilter) (store.Page[store.ExternalAccount], error) {
	scopes := 0
	for _, set := range []bool{f.CustomerID != "", f.Platform, f.AllCustomers} {
		if set {
			scopes++
		}
	}
	if scopes != 1 {
		return store.Page[store.ExternalAccount]{}, errScope
	}
	w := filter{conds: []string{"owner = ?"}, args: []any{ownerOf(f.CustomerID)}}
	if f.AllCustomers {
		// Every owner but the platform (""): the pages follow the primary key.
		w = filter{conds: []string{"owner <> ?"}, args: []any{ownerOf("")}}
	}
	w.eq("currency", f.Currency)
	w.in("id", f.IDs)
	return listPage(ctx, t, "list external accounts", "external_accounts", externalAccountCols, w, f.Limit, f.Cursor,
		scanExternalAccount, func(a *store.ExternalAccount) string { return a.ID })
}

// UpdateExternalAccountStatus replaces the verification result as a whole:
// a nil u.BeneficiaryVerifiedData clears stored data. An INACTIVE account
// also loses defaultUmaDepositAccount.
func (t *tx) UpdateExternalAccountStatus(ctx context.Context, id string, u store.ExternalAccountStatusUpdate, at time.Time) error {
	keepDefault := u.Status != "INACTIVE"
	return t.updateOne(ctx, fmt.Sprintf("update status of external account %q", id),
		`UPDATE external_accounts SET status = ?, beneficiary_verification_status = ?, beneficiary_verified_data = ?,
		default_uma_deposit_account = (default_uma_deposit_account AND ?), updated_at = ? WHERE id = ?`,
		u.Status, u.BeneficiaryVerificationStatus, exactBlob(u.BeneficiaryVerifiedData), keepDefault, t.d.timeArg(at), id)
}

// PendingExternalAccounts orders by CreatedAt and breaks ties by id. A limit
// below 1 returns no accounts (SQLite would take a negative LIMIT for no
// limit at all).
func (t *tx) PendingExternalAccounts(ctx context.Context, limit int) ([]store.ExternalAccount, error) {
	if limit < 1 {
		return []store.ExternalAccount{}, nil
	}
	what := "pending external accounts"
	rows, err := t.query(ctx, `SELECT `+externalAccountCols+` FROM external_accounts
		WHERE status = 'PENDING' AND COALESCE(beneficiary_verification_status, '') = ''
		ORDER BY created_at, id LIMIT ?`, limit)
	if err != nil {
		return nil, t.fail(what, err)
	}
	as, err := collect(rows, scanExternalAccount)
	if err != nil {
		return nil, t.fail(what, err)
	}
	return as, nil
}

// updateOne runs an UPDATE of one row by key and reports ErrNotFound when
// there is no such row.
func (t *tx) updateOne(ctx context.Context, what, update string, args ...any) error {
	res, err := t.exec(ctx, update, args...)
	if err != nil {
		return t.fail(what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return t.fail(what, err)
	}
	if n == 0 {
		return t.fail(what, sql.ErrNoRows)
	}
	return nil
}

// ---- agents

const agentCols = `id, customer_id, name, policy, is_paused, created_at, updated_at`

// agentColsA is agentCols qualified for a join with agents AS a.
const agentColsA = `a.id, a.customer_id, a.name, a.policy, a.is_paused, a.created_at, a.updated_at`

func scanAgent(s scanner) (store.Agent, error) {
	var a store.Agent
	err := s.Scan(&a.ID, &a.CustomerID, &a.Name, exactBytesCol{&a.Policy}, &a.IsPaused,
		timeCol{&a.CreatedAt}, timeCol{&a.UpdatedAt})
	return a, err
}

// CreateAgent fails with ErrConflict for a taken id and with ErrNotFound
// for an unknown customer.
func (t *tx) CreateAgent(ctx context.Context, a *store.Agent) error {
	return t.insert(ctx, fmt.Sprintf("create agent %q", a.ID),
		`INSERT INTO agents (`+agentCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.CustomerID, a.Name, exactBlob(a.Policy), a.IsPaused, t.d.timeArg(a.CreatedAt), t.d.timeArg(a.UpdatedAt))
}

// GetAgent reads one agent by id; ErrNotFound if there is none or it was
// deleted.
func (t *tx) GetAgent(ctx context.Context, id string) (*store.Agent, error) {
	a, err := scanAgent(t.queryRow(ctx, `SELECT `+agentCols+` FROM agents WHERE id = ? AND deleted_at IS NULL`, id))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("agent %q", id), err)
	}
	return &a, nil
}

// SetAgentPaused sets UpdatedAt even when the agent already was in the
// requested state. ErrNotFound for a missing id.
func (t *tx) SetAgentPaused(ctx context.Context, id string, paused bool, at time.Time) error {
	return t.updateOne(ctx, fmt.Sprintf("set paused of agent %q", id),
		`UPDATE agents SET is_paused = ?, updated_at = ? WHERE id = ?`, paused, t.d.timeArg(at), id)
}

// ---- device codes

const deviceCodeCols = `code, agent_id, created_at, expires_at, redeemed_at`

func scanDeviceCode(s scanner) (store.DeviceCode, error) {
	var d store.DeviceCode
	err := s.Scan(&d.Code, &d.AgentID, timeCol{&d.CreatedAt}, timeCol{&d.ExpiresAt}, timeCol{&d.RedeemedAt})
	return d, err
}

// CreateDeviceCode inserts first and then ends the agent's other codes, so
// that a refused insert (taken code) has changed nothing even if the caller
// goes on to commit. Only codes that are unredeemed and still valid at
// d.CreatedAt are ended; an already expired code keeps its earlier ExpiresAt.
func (t *tx) CreateDeviceCode(ctx context.Context, d *store.DeviceCode) error {
	what := fmt.Sprintf("create device code for agent %q", d.AgentID)
	if err := t.insert(ctx, what, `INSERT INTO device_codes (`+deviceCodeCols+`) VALUES (?, ?, ?, ?, ?)`,
		d.Code, d.AgentID, t.d.timeArg(d.CreatedAt), t.d.timeArg(d.ExpiresAt), t.d.timeArg(d.RedeemedAt)); err != nil {
		return err
	}
	created := t.d.timeArg(d.CreatedAt)
	if _, err := t.exec(ctx, `UPDATE device_codes SET expires_at = ?
		WHERE agent_id = ? AND code <> ? AND redeemed_at IS NULL AND expires_at > ?`,
		created, d.AgentID, d.Code, created); err != nil {
		return t.fail(what, err)
	}
	return nil
}

// GetDeviceCode reads one code, redeemed, ended or not; ErrNotFound if
// there is none.
func (t *tx) GetDeviceCode(ctx context.Context, code string) (*store.DeviceCode, error) {
	d, err := scanDeviceCode(t.queryRow(ctx, `SELECT `+deviceCodeCols+` FROM device_codes WHERE code = ?`, code))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("device code %q", code), err)
	}
	return &d, nil
}

// RedeemDeviceCode treats a code as expired from its ExpiresAt on
// (expires_at > at), like sessions.
func (t *tx) RedeemDeviceCode(ctx context.Context, code string, at time.Time) (bool, error) {
	return t.compareAndSetBy(ctx, fmt.Sprintf("redeem device code %q", code), "device_codes", "code", code, at,
		`UPDATE device_codes SET redeemed_at = ? WHERE code = ? AND redeemed_at IS NULL AND expires_at > ?`,
		t.d.timeArg(at), code, t.d.timeArg(at))
}

// ---- agent tokens

// CreateAgentToken stores t.RevokedAt as given, so a token can be recorded
// as revoked. ErrConflict for a taken hash, ErrNotFound for an unknown agent.
func (t *tx) CreateAgentToken(ctx context.Context, k *store.AgentToken) error {
	return t.insert(ctx, fmt.Sprintf("create token of agent %q", k.AgentID),
		`INSERT INTO agent_tokens (token_hash, agent_id, created_at, revoked_at) VALUES (?, ?, ?, ?)`,
		blob(k.TokenHash), k.AgentID, t.d.timeArg(k.CreatedAt), t.d.timeArg(k.RevokedAt))
}

// AgentByToken returns the agent whether or not it is paused; deciding what
// a paused agent may do is the caller's business.
func (t *tx) AgentByToken(ctx context.Context, tokenHash []byte) (*store.Agent, error) {
	a, err := scanAgent(t.queryRow(ctx, `SELECT `+agentColsA+` FROM agent_tokens k JOIN agents a ON a.id = k.agent_id
		WHERE k.token_hash = ? AND k.revoked_at IS NULL`, blob(tokenHash)))
	if err != nil {
		return nil, t.fail("agent by token", err)
	}
	return &a, nil
}

// AgentConnected reports whether the agent holds an unrevoked access token,
// that is, whether one of its device codes was redeemed.
func (t *tx) AgentConnected(ctx context.Context, agentID string) (bool, error) {
	var n int
	err := t.queryRow(ctx, `SELECT COUNT(*) FROM agent_tokens WHERE agent_id = ? AND revoked_at IS NULL`, agentID).Scan(&n)
	if err != nil {
		return false, t.fail("agent connected", err)
	}
	return n > 0, nil
}
