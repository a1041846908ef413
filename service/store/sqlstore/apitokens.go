package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"paywallet/service/store"
)

// ---- platform API tokens (store.APITokenTx)

const apiTokenCols = `id, name, permissions, client_id, secret_hash, created_at, updated_at`

// The permissions column holds the list comma-separated (the values are
// the reference's enum words, which hold no comma).
func scanAPIToken(s scanner) (store.APIToken, error) {
	var a store.APIToken
	var perms string
	err := s.Scan(&a.ID, &a.Name, &perms, &a.ClientID, bytesCol{&a.SecretHash}, timeCol{&a.CreatedAt}, timeCol{&a.UpdatedAt})
	a.Permissions = []string{}
	if perms != "" {
		a.Permissions = strings.Split(perms, ",")
	}
	return a, err
}

func (t *tx) CreateAPIToken(ctx context.Context, a *store.APIToken) error {
	return t.insert(ctx, fmt.Sprintf("create API token %q", a.ID),
		`INSERT INTO api_tokens (`+apiTokenCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.Name, strings.Join(a.Permissions, ","), a.ClientID, a.SecretHash,
		t.d.timeArg(a.CreatedAt), t.d.timeArg(a.UpdatedAt))
}

func (t *tx) GetAPIToken(ctx context.Context, id string) (*store.APIToken, error) {
	a, err := scanAPIToken(t.queryRow(ctx, `SELECT `+apiTokenCols+` FROM api_tokens WHERE id = ?`, id))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("API token %q", id), err)
	}
	return &a, nil
}

func (t *tx) GetAPITokenByClientID(ctx context.Context, clientID string) (*store.APIToken, error) {
	a, err := scanAPIToken(t.queryRow(ctx, `SELECT `+apiTokenCols+` FROM api_tokens WHERE client_id = ?`, clientID))
	if err != nil {
		return nil, t.fail("API token of a client id", err)
	}
	return &a, nil
}

// timeBound keeps the rows whose column is at least (op ">=") or at most
// (op "<=") v; the zero time adds no condition.
func (t *tx) timeBound(f *filter, col, op string, v time.Time) {
	if !v.IsZero() {
		f.conds = append(f.conds, col+" "+op+" ?")
		f.args = append(f.args, t.d.timeArg(v))
	}
}

func (t *tx) ListAPITokens(ctx context.Context, f store.APITokenFilter) (store.Page[store.APIToken], error) {
	var w filter
	w.eq("name", f.Name)
	t.timeBound(&w, "created_at", ">=", f.CreatedAfter)
	t.timeBound(&w, "created_at", "<=", f.CreatedBefore)
	t.timeBound(&w, "updated_at", ">=", f.UpdatedAfter)
	t.timeBound(&w, "updated_at", "<=", f.UpdatedBefore)
	return listPage(ctx, t, "list API tokens", "api_tokens", apiTokenCols, w, f.Limit, f.Cursor,
		scanAPIToken, func(a *store.APIToken) string { return a.ID })
}

func (t *tx) DeleteAPIToken(ctx context.Context, id string) error {
	return t.updateOne(ctx, fmt.Sprintf("delete API token %q", id), `DELETE FROM api_tokens WHERE id = ?`, id)
}
