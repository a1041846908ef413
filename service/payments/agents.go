package payments

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/shared/wire"
)

// Agents are automated callers that act for one customer under a policy
// (grid-api-facts §3.8). The platform creates an agent and a device code;
// whoever holds the code redeems it once for a bearer token, which the
// service keeps only as a SHA-256 hash. Agent endpoints accept that token
// and nothing else; each request is bound to the agent's customer.

const deviceCodeTTL = 10 * time.Minute

// agentPolicy is AgentPolicy; decoding refuses unknown fields at any depth.
type agentPolicy struct {
	Permissions          []string `json:"permissions"`
	DefaultExecutionMode string   `json:"defaultExecutionMode"`
	SpendingLimits       *struct {
		Currency              string `json:"currency"`
		PerTransactionLimit   *int64 `json:"perTransactionLimit"`
		DailyLimit            *int64 `json:"dailyLimit"`
		DailyTransactionLimit *int64 `json:"dailyTransactionLimit,omitempty"`
		MonthlyLimit          *int64 `json:"monthlyLimit"`
	} `json:"spendingLimits"`
	AccountRestrictions *struct {
		AllowedAccountIDs []string `json:"allowedAccountIds"`
		AccountRules      []struct {
			AccountID           string `json:"accountId"`
			ExecutionMode       string `json:"executionMode,omitempty"`
			PerTransactionLimit *int64 `json:"perTransactionLimit"`
		} `json:"accountRules,omitempty"`
	} `json:"accountRestrictions,omitempty"`
	ApprovalThresholds *struct {
		Currency string `json:"currency,omitempty"`
		Amount   *int64 `json:"amount"`
	} `json:"approvalThresholds,omitempty"`
}

var agentPermissions = []string{"VIEW_TRANSACTIONS", "CREATE_TRANSFERS", "CREATE_QUOTES", "EXECUTE_QUOTES", "MANAGE_EXTERNAL_ACCOUNTS"}

func (p *agentPolicy) validate(fe *fieldErrors) {
	if len(p.Permissions) == 0 {
		fe.add("policy.permissions", "required: at least one permission")
	}
	for i, perm := range p.Permissions {
		if !slices.Contains(agentPermissions, perm) {
			fe.addConstraint("policy.permissions."+strconv.Itoa(i), "unknown permission", wire.FieldConstraint{Enum: agentPermissions})
		}
	}
	modes := []string{"AUTO", "APPROVAL_REQUIRED"}
	if p.DefaultExecutionMode == "" {
		fe.add("policy.defaultExecutionMode", "required")
	} else if !slices.Contains(modes, p.DefaultExecutionMode) {
		fe.addConstraint("policy.defaultExecutionMode", "must be AUTO or APPROVAL_REQUIRED", wire.FieldConstraint{Enum: modes})
	}
	sl := p.SpendingLimits
	if sl == nil {
		fe.add("policy.spendingLimits", "required")
	} else {
		if !currencyCode(sl.Currency) {
			fe.add("policy.spendingLimits.currency", "required: a currency code")
		}
		if sl.PerTransactionLimit == nil {
			fe.add("policy.spendingLimits.perTransactionLimit", "required")
		}
		for name, v := range map[string]*int64{"perTransactionLimit": sl.PerTransactionLimit, "dailyLimit": sl.DailyLimit, "dailyTransactionLimit": sl.DailyTransactionLimit, "monthlyLimit": sl.MonthlyLimit} {
			if v != nil && *v < 0 {
				fe.add("policy.spendingLimits."+name, "must not be negative")
			}
		}
	}
	if ar := p.AccountRestrictions; ar != nil {
		for i, id := range ar.AllowedAccountIDs {
			if !ids.Valid("ExternalAccount", id) && !ids.Valid("InternalAccount", id) {
				fe.add("policy.accountRestrictions.allowedAccountIds."+strconv.Itoa(i), "must be an account id")
			}
		}
		for i, rule := range ar.AccountRules {
			if rule.AccountID == "" {
				fe.add("policy.accountRestrictions.accountRules."+strconv.Itoa(i)+".accountId", "required")
			} else if !ids.Valid("ExternalAccount", rule.AccountID) && !ids.Valid("InternalAccount", rule.AccountID) {
				fe.add("policy.accountRestrictions.accountRules."+strconv.Itoa(i)+".accountId", "must be an account id")
			}
			if v := rule.PerTransactionLimit; v != nil && *v < 0 {
				fe.add("policy.accountRestrictions.accountRules."+strconv.Itoa(i)+".perTransactionLimit", "must not be negative")
			}
			if rule.ExecutionMode != "" && !slices.Contains(modes, rule.ExecutionMode) {
				fe.addConstraint("policy.accountRestrictions.accountRules."+strconv.Itoa(i)+".executionMode", "must be AUTO or APPROVAL_REQUIRED", wire.FieldConstraint{Enum: modes})
			}
		}
	}
	if at := p.ApprovalThresholds; at != nil {
		if at.Currency != "" && !currencyCode(at.Currency) {
			fe.add("policy.approvalThresholds.currency", "must be a currency code")
		}
		if at.Amount == nil {
			fe.add("policy.approvalThresholds.amount", "required")
		} else if *at.Amount < 0 {
			fe.add("policy.approvalThresholds.amount", "must not be negative")
		}
	}
}

type agentCreateRequest struct {
	CustomerID string          `json:"customerId"`
	Name       string          `json:"name"`
	Policy     json.RawMessage `json:"policy"`
}

type agentJSON struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	CustomerID  string          `json:"customerId"`
	IsPaused    bool            `json:"isPaused"`
	IsConnected bool            `json:"isConnected"`
	Policy      json.RawMessage `json:"policy"`
	Usage       agentUsage      `json:"usage"`
	CreatedAt   string          `json:"createdAt"`
	UpdatedAt   string          `json:"updatedAt"`
}

// agentUsage counts an agent's spending. Agents cannot move money yet, so
// every counter is zero; the quotes work fills them.
type agentUsage struct {
	DailyTransactionCount int64 `json:"dailyTransactionCount"`
	DailySpend            int64 `json:"dailySpend"`
	MonthlySpend          int64 `json:"monthlySpend"`
}

func renderAgent(a *store.Agent, connected bool) agentJSON {
	return agentJSON{ID: a.ID, Name: a.Name, CustomerID: a.CustomerID, IsPaused: a.IsPaused, IsConnected: connected,
		Policy: a.Policy, CreatedAt: timestamp(a.CreatedAt), UpdatedAt: timestamp(a.UpdatedAt)}
}

// createAgent handles POST /agents.
func (s *Service) createAgent(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var req agentCreateRequest
	if err := decodeJSON(r, body, &req, false); err != nil {
		return err
	}
	var fe fieldErrors
	if !ids.Valid("Customer", req.CustomerID) {
		fe.add("customerId", "required: a Customer:<uuid> id")
	}
	if n := len([]rune(strings.TrimSpace(req.Name))); n == 0 || n > 100 {
		fe.addConstraint("name", "required, 1 to 100 characters", wire.FieldConstraint{MinLength: new(1), MaxLength: new(100)})
	}
	var pol agentPolicy
	switch {
	case len(req.Policy) == 0 || string(req.Policy) == "null":
		fe.add("policy", "required")
	default:
		// Decoded on its own so that problems inside carry the policy. path.
		dec := json.NewDecoder(bytes.NewReader(req.Policy))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&pol); err != nil {
			if e, ok := jsonDecodeError(err).(*Error); ok && e.Details != nil {
				for _, f := range e.Details["errors"].([]wire.FieldError) {
					fe.add("policy."+f.Field, f.Message)
				}
			} else {
				fe.add("policy", "must be an AgentPolicy object")
			}
		} else {
			pol.validate(&fe)
		}
	}
	if e := fe.err(); e != nil {
		return e
	}
	policy, err := json.Marshal(pol)
	if err != nil {
		return err
	}
	now := s.now()
	a := store.Agent{ID: ids.New("Agent"), CustomerID: req.CustomerID, Name: strings.TrimSpace(req.Name), Policy: policy, CreatedAt: now, UpdatedAt: now}
	err = s.store.Tx(ctx, func(tx store.Tx) error {
		if _, err := tx.GetCustomer(ctx, a.CustomerID); errors.Is(err, store.ErrNotFound) {
			return invalidField("customerId", "no customer with this id")
		} else if err != nil {
			return err
		}
		return tx.CreateAgent(ctx, &a)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, renderAgent(&a, false))
	return nil
}

func loadAgent(ctx context.Context, tx store.Tx, id string) (*store.Agent, error) {
	notFound := errorf(CodeNotFound, "no agent with this id")
	if !ids.Valid("Agent", id) {
		return nil, notFound
	}
	a, err := tx.GetAgent(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound
	}
	return a, err
}

// getAgent handles GET /agents/{agentId}.
func (s *Service) getAgent(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var out agentJSON
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		a, err := loadAgent(ctx, tx, r.PathValue("agentId"))
		if err != nil {
			return err
		}
		connected, err := tx.AgentConnected(ctx, a.ID)
		out = renderAgent(a, connected)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// updateAgent handles PATCH /agents/{agentId} {isPaused}: pausing stops
// every agent request at once; resuming allows them again.
func (s *Service) updateAgent(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var req struct {
		IsPaused *bool `json:"isPaused"`
	}
	if err := decodeJSON(r, body, &req, false); err != nil {
		return err
	}
	if req.IsPaused == nil {
		return invalidField("isPaused", "required")
	}
	var out agentJSON
	err = s.store.Tx(ctx, func(tx store.Tx) error {
		a, err := loadAgent(ctx, tx, r.PathValue("agentId"))
		if err != nil {
			return err
		}
		if err := tx.SetAgentPaused(ctx, a.ID, *req.IsPaused, s.now()); err != nil {
			return err
		}
		if a, err = tx.GetAgent(ctx, a.ID); err != nil {
			return err
		}
		connected, err := tx.AgentConnected(ctx, a.ID)
		out = renderAgent(a, connected)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type deviceCodeJSON struct {
	Code      string `json:"code"`
	AgentID   string `json:"agentId"`
	ExpiresAt string `json:"expiresAt"`
	Redeemed  bool   `json:"redeemed"`
}

// newDeviceCode draws AGENT-XXXX-XXXX from 32 unambiguous characters (no
// 0/O, 1/I): 40 bits, enough for a code that lives ten minutes and is
// single-use.
func newDeviceCode() (string, error) {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	out := []byte("AGENT-XXXX-XXXX")
	for i, c := range b {
		pos := 6 + i
		if i >= 4 {
			pos++
		}
		out[pos] = alphabet[int(c)%len(alphabet)]
	}
	return string(out), nil
}

// createDeviceCode handles POST /agents/{agentId}/device-codes; a new code
// ends the agent's earlier unredeemed ones.
func (s *Service) createDeviceCode(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	code, err := newDeviceCode()
	if err != nil {
		return err
	}
	var d store.DeviceCode
	err = s.store.Tx(ctx, func(tx store.Tx) error {
		a, err := loadAgent(ctx, tx, r.PathValue("agentId"))
		if err != nil {
			return err
		}
		now := s.now()
		d = store.DeviceCode{Code: code, AgentID: a.ID, CreatedAt: now, ExpiresAt: now.Add(deviceCodeTTL)}
		return tx.CreateDeviceCode(ctx, &d)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, deviceCodeJSON{Code: d.Code, AgentID: d.AgentID, ExpiresAt: timestamp(d.ExpiresAt)})
	return nil
}

// deviceCodeStatus handles GET /agents/device-codes/{code}/status.
func (s *Service) deviceCodeStatus(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var d *store.DeviceCode
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		var err error
		d, err = tx.GetDeviceCode(ctx, r.PathValue("code"))
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return errorf(CodeNotFound, "no such device code")
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"code": d.Code, "redeemed": !d.RedeemedAt.IsZero()})
	return nil
}

// redeemDeviceCode handles POST /agents/device-codes/{code}/redeem. It
// needs no credential (the code is the proof), works once, and returns the
// access token, which is never shown again.
func (s *Service) redeemDeviceCode(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var raw [20]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return err
	}
	token := "gat_" + hex.EncodeToString(raw[:])
	hash := sha256.Sum256([]byte(token))
	var a *store.Agent
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		code := r.PathValue("code")
		d, err := tx.GetDeviceCode(ctx, code)
		if errors.Is(err, store.ErrNotFound) {
			return errorf(CodeNotFound, "no such device code")
		}
		if err != nil {
			return err
		}
		now := s.now()
		won, err := tx.RedeemDeviceCode(ctx, code, now)
		if err != nil {
			return err
		}
		if !won {
			return errorf("EXPIRED", "this device code was already redeemed or has expired")
		}
		if a, err = tx.GetAgent(ctx, d.AgentID); err != nil {
			return err
		}
		return tx.CreateAgentToken(ctx, &store.AgentToken{TokenHash: hash[:], AgentID: a.ID, CreatedAt: now})
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"agentId": a.ID, "agentName": a.Name, "accessToken": token, "policy": json.RawMessage(a.Policy)})
	return nil
}

// AuthenticateAgent resolves an agent access token (the bearer token of the
// /agents/me operations) to its agent: 401 UNAUTHORIZED for a token that
// names no agent, 403 FORBIDDEN for a paused one. The platform credential is
// never an agent's: agent operations act for one customer and must not be
// reachable with a credential that sees all of them.
func (s *Service) AuthenticateAgent(ctx context.Context, token string) (*store.Agent, error) {
	if token == "" {
		return nil, ErrAgentUnauthorized
	}
	hash := sha256.Sum256([]byte(token))
	a, err := read(ctx, s, func(tx store.Tx) (*store.Agent, error) { return tx.AgentByToken(ctx, hash[:]) })
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, ErrAgentUnauthorized
		}
		return nil, err
	}
	if a.IsPaused {
		return nil, errorf(CodeForbidden, "this agent is paused")
	}
	return a, nil
}

// ErrAgentUnauthorized refuses an agent request without a valid token.
var ErrAgentUnauthorized = errorf(CodeUnauthorized, "an agent access token (Authorization: Bearer gat_…) is required")

// AgentExternalAccount is an external account as the agent may see it (GET
// /agents/me/external-accounts/{id}): only accounts of the agent's customer
// (and of its allow-list, when the policy has one), with
// MANAGE_EXTERNAL_ACCOUNTS. Any other account is 404, exactly as a missing
// one.
func (s *Service) AgentExternalAccount(ctx context.Context, agent *store.Agent, id string) (wire.ExternalAccount, error) {
	var policy agentPolicy
	if err := json.Unmarshal(agent.Policy, &policy); err != nil {
		return wire.ExternalAccount{}, err
	}
	if !slices.Contains(policy.Permissions, "MANAGE_EXTERNAL_ACCOUNTS") {
		return wire.ExternalAccount{}, errorf(CodeForbidden, "the agent's policy lacks MANAGE_EXTERNAL_ACCOUNTS")
	}
	notFound := errorf(CodeNotFound, "no external account with this id")
	if ar := policy.AccountRestrictions; ar != nil && ar.AllowedAccountIDs != nil && !slices.Contains(ar.AllowedAccountIDs, id) {
		return wire.ExternalAccount{}, notFound
	}
	a, err := s.loadExternalAccount(ctx, id)
	if err != nil {
		return wire.ExternalAccount{}, err
	}
	if a.CustomerID != agent.CustomerID {
		return wire.ExternalAccount{}, notFound
	}
	return externalAccountJSON(a), nil
}

// legacyAgentRoutes are this area's handlers that are not yet operations (see
// LegacyRoutes).
func (s *Service) legacyAgentRoutes() map[string]LegacyHandler {
	return map[string]LegacyHandler{
		"POST /agents":                            s.createAgent,
		"GET /agents/{agentId}":                   s.getAgent,
		"PATCH /agents/{agentId}":                 s.updateAgent,
		"POST /agents/{agentId}/device-codes":     s.createDeviceCode,
		"GET /agents/device-codes/{code}/status":  s.deviceCodeStatus,
		"POST /agents/device-codes/{code}/redeem": s.redeemDeviceCode,
	}
}
