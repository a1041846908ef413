package payments

import (
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/shared/wire"
)

// # Platform API tokens (POST, GET /tokens, GET, DELETE /tokens/{tokenId})
//
// A token is a further platform credential beside the configured one
// (Config.PlatformCredential, which is how the first token is made): HTTP
// Basic <clientId>:<clientSecret>, limited to its permissions. The secret is
// answered once, by the create; the store keeps only tokenMAC of it, and
// every request reads the token from the store, so a deleted token is
// refused by every instance from the next request on.

// Permissions of the reference (Permission): VIEW reads everything,
// TRANSACT sends payments, MANAGE changes the platform's configuration,
// tokens and customers. They are independent: MANAGE does not include
// VIEW. The configured credential holds all three.
const (
	PermissionView     = "VIEW"
	PermissionTransact = "TRANSACT"
	PermissionManage   = "MANAGE"
)

// Permissions are the permissions a token can hold, in the reference's order.
var Permissions = []string{PermissionView, PermissionTransact, PermissionManage}

// CodeTokenNotFound answers a token id that names no token.
const CodeTokenNotFound = "TOKEN_NOT_FOUND"

// Principal is who a platform request comes from: the configured
// credential (TokenID empty) or a token, with the permissions it holds.
type Principal struct {
	TokenID     string
	Permissions []string
}

// ConfiguredCredential is the principal of the configured platform
// credential: every permission.
var ConfiguredCredential = Principal{Permissions: Permissions}

// Has reports whether p holds the permission.
func (p Principal) Has(permission string) bool { return slices.Contains(p.Permissions, permission) }

// APITokenRequest is the body of POST /tokens (ApiTokenCreateRequest).
type APITokenRequest struct {
	Name        string   `json:"name"`
	Permissions []string `json:"permissions"`
}

// APIToken is a token as the API answers it (ApiToken); ClientSecret only
// in the answer of its create.
type APIToken struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Permissions  []string `json:"permissions"`
	ClientID     string   `json:"clientId"`
	ClientSecret string   `json:"clientSecret,omitempty"`
	CreatedAt    string   `json:"createdAt"`
	UpdatedAt    string   `json:"updatedAt"`
}

func apiTokenJSON(t *store.APIToken) APIToken {
	return APIToken{ID: t.ID, Name: t.Name, Permissions: slices.Clone(t.Permissions), ClientID: t.ClientID,
		CreatedAt: timestamp(t.CreatedAt), UpdatedAt: timestamp(t.UpdatedAt)}
}

// tokenMACInfo is the HKDF info that derives the token hash key from the
// at-rest key; a new construction needs a new version.
const tokenMACInfo = "paywallet/api-token-mac/v1"

// tokenMAC is what the api_tokens table keeps of a client secret:
// HMAC-SHA-256, under a key derived from the at-rest key (never stored), of
// the token id, the client id and the secret. The secret is 256 random
// bits, so a fast keyed hash is enough; the key means a copy of the
// database alone cannot even test a guess, and the ids bind the value to
// its row.
func (s *Service) tokenMAC(tokenID, clientID, secret string) ([]byte, error) {
	key, err := hkdf.Key(sha256.New, s.cfg.AtRestKey, nil, tokenMACInfo, 32)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(tokenID + "\x00" + clientID + "\x00" + secret))
	return m.Sum(nil), nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

const maxTokenName = 255

// CreateAPIToken makes a token (POST /tokens) and answers it with its
// clientSecret, the only time the secret is shown. A credential grants
// only permissions it holds itself (403 FORBIDDEN otherwise), so a token
// cannot make a stronger one.
func (s *Service) CreateAPIToken(ctx context.Context, by Principal, req APITokenRequest) (APIToken, error) {
	var fe fieldErrors
	name := strings.TrimSpace(req.Name)
	if n := utf8.RuneCountInString(name); n == 0 || n > maxTokenName {
		fe.addConstraint("name", "required, 1 to 255 characters", wire.FieldConstraint{MinLength: new(1), MaxLength: new(maxTokenName)})
	}
	if len(req.Permissions) == 0 {
		fe.addConstraint("permissions", "required: at least one of VIEW, TRANSACT, MANAGE", wire.FieldConstraint{Enum: Permissions})
	}
	var missing []string
	for i, p := range req.Permissions {
		f := "permissions[" + strconv.Itoa(i) + "]"
		switch {
		case !slices.Contains(Permissions, p):
			fe.addConstraint(f, "must be one of VIEW, TRANSACT, MANAGE", wire.FieldConstraint{Enum: Permissions})
		case slices.Contains(req.Permissions[:i], p):
			fe.add(f, "duplicate of an earlier item")
		case !by.Has(p):
			missing = append(missing, p)
		}
	}
	if e := fe.err(); e != nil {
		return APIToken{}, e
	}
	if len(missing) > 0 {
		return APIToken{}, &Error{Code: CodeForbidden,
			Message: "a credential grants only permissions it holds; this one lacks " + strings.Join(missing, ", "),
			Details: map[string]any{"field": "permissions", "missing": missing}}
	}
	perms := []string{}
	for _, p := range Permissions { // stored in the reference's order
		if slices.Contains(req.Permissions, p) {
			perms = append(perms, p)
		}
	}
	clientID, err := randomHex(16)
	if err != nil {
		return APIToken{}, err
	}
	secret, err := randomHex(32)
	if err != nil {
		return APIToken{}, err
	}
	now := s.now()
	t := store.APIToken{ID: ids.New("Token"), Name: name, Permissions: perms, ClientID: clientID, CreatedAt: now, UpdatedAt: now}
	if t.SecretHash, err = s.tokenMAC(t.ID, t.ClientID, secret); err != nil {
		return APIToken{}, err
	}
	out, err := commit(ctx, s, "", nil, func(tx store.Tx) (APIToken, error) {
		if err := tx.CreateAPIToken(ctx, &t); err != nil {
			return APIToken{}, err
		}
		return apiTokenJSON(&t), nil
	})
	if err != nil {
		return APIToken{}, err
	}
	out.ClientSecret = secret
	return out, nil
}

// APITokenFilter is the query of ListAPITokens (GET /tokens): name exactly,
// the four RFC 3339 bounds inclusive.
type APITokenFilter struct {
	Name          string `query:"name"`
	CreatedAfter  string `query:"createdAfter"`
	CreatedBefore string `query:"createdBefore"`
	UpdatedAfter  string `query:"updatedAfter"`
	UpdatedBefore string `query:"updatedBefore"`
	Page          PageRequest
}

// ListAPITokens pages the platform's tokens, oldest first, without their
// secrets.
func (s *Service) ListAPITokens(ctx context.Context, req APITokenFilter) (wire.List[APIToken], error) {
	var fe fieldErrors
	f := store.APITokenFilter{Name: req.Name}
	f.Limit, f.Cursor = req.Page.check("Token", &fe)
	f.CreatedAfter = dateTime(&fe, "createdAfter", req.CreatedAfter)
	f.CreatedBefore = dateTime(&fe, "createdBefore", req.CreatedBefore)
	f.UpdatedAfter = dateTime(&fe, "updatedAfter", req.UpdatedAfter)
	f.UpdatedBefore = dateTime(&fe, "updatedBefore", req.UpdatedBefore)
	if e := fe.err(); e != nil {
		return wire.List[APIToken]{}, e
	}
	return listPage(ctx, s, func(tx store.Tx) (store.Page[store.APIToken], error) { return tx.ListAPITokens(ctx, f) }, apiTokenJSON)
}

var errTokenNotFound = errorf(CodeTokenNotFound, "no API token with this id")

func loadAPIToken(ctx context.Context, tx store.Tx, id string) (*store.APIToken, error) {
	if !ids.Valid("Token", id) {
		return nil, errTokenNotFound
	}
	t, err := tx.GetAPIToken(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errTokenNotFound
	}
	return t, err
}

// GetAPIToken is a token without its secret (GET /tokens/{tokenId}).
func (s *Service) GetAPIToken(ctx context.Context, id string) (APIToken, error) {
	return read(ctx, s, func(tx store.Tx) (APIToken, error) {
		t, err := loadAPIToken(ctx, tx, id)
		if err != nil {
			return APIToken{}, err
		}
		return apiTokenJSON(t), nil
	})
}

// DeleteAPIToken deletes a token (DELETE /tokens/{tokenId}); it is refused
// from the next request on, on every instance. A token may delete itself
// (the request that does so is answered), and any token, whoever made it:
// the reference gives MANAGE the platform's tokens without an owner. The
// configured credential is no token and cannot be deleted here.
func (s *Service) DeleteAPIToken(ctx context.Context, id string) error {
	_, err := commit(ctx, s, "", nil, func(tx store.Tx) (struct{}, error) {
		t, err := loadAPIToken(ctx, tx, id)
		if err != nil {
			return struct{}{}, err
		}
		return struct{}{}, tx.DeleteAPIToken(ctx, t.ID)
	})
	return err
}

// ErrPlatformUnauthorized refuses a platform request without a valid
// credential.
var ErrPlatformUnauthorized = errorf(CodeUnauthorized, "a valid platform credential (HTTP Basic <token id>:<secret>) is required")

// AuthenticateAPIToken is the principal of the token whose Basic
// credential is clientID:secret, read from the store on every call (a
// deleted token fails at once); ErrPlatformUnauthorized when none matches.
// The secret is compared as its MAC, in constant time; an unknown client id
// costs a MAC too.
func (s *Service) AuthenticateAPIToken(ctx context.Context, clientID, secret string) (Principal, error) {
	if clientID == "" || secret == "" {
		return Principal{}, ErrPlatformUnauthorized
	}
	t, err := read(ctx, s, func(tx store.Tx) (*store.APIToken, error) { return tx.GetAPITokenByClientID(ctx, clientID) })
	if errors.Is(err, store.ErrNotFound) {
		if _, err := s.tokenMAC("", clientID, secret); err != nil {
			return Principal{}, err
		}
		return Principal{}, ErrPlatformUnauthorized
	}
	if err != nil {
		return Principal{}, err
	}
	mac, err := s.tokenMAC(t.ID, t.ClientID, secret)
	if err != nil {
		return Principal{}, err
	}
	if subtle.ConstantTimeCompare(mac, t.SecretHash) != 1 {
		return Principal{}, ErrPlatformUnauthorized
	}
	return Principal{TokenID: t.ID, Permissions: slices.Clone(t.Permissions)}, nil
}
