package payments

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
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

// AgentRequest is the request of CreateAgent (the body of POST /agents).
// Policy stays raw JSON: CreateAgent decodes it on its own so that the
// problems inside it are named under policy.
type AgentRequest struct {
	CustomerID string          `json:"customerId"`
	Name       string          `json:"name"`
	Policy     json.RawMessage `json:"policy"`
}

// Agent is an agent as the platform sees it.
type Agent struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	CustomerID  string          `json:"customerId"`
	IsPaused    bool            `json:"isPaused"`
	IsConnected bool            `json:"isConnected"`
	Policy      json.RawMessage `json:"policy"`
	Usage       AgentUsage      `json:"usage"`
	CreatedAt   string          `json:"createdAt"`
	UpdatedAt   string          `json:"updatedAt"`
}

// AgentUsage counts an agent's spending. Agents cannot move money yet, so
// every counter is zero; the quotes work fills them.
type AgentUsage struct {
	DailyTransactionCount int64 `json:"dailyTransactionCount"`
	DailySpend            int64 `json:"dailySpend"`
	MonthlySpend          int64 `json:"monthlySpend"`
}

func renderAgent(a *store.Agent, connected bool) Agent {
	return Agent{ID: a.ID, Name: a.Name, CustomerID: a.CustomerID, IsPaused: a.IsPaused, IsConnected: connected,
		Policy: a.Policy, CreatedAt: timestamp(a.CreatedAt), UpdatedAt: timestamp(a.UpdatedAt)}
}

// CreateAgent creates an agent of a customer under a policy (POST
// /agents). The policy is stored as the service read it: canonical JSON of
// the known members.
func (s *Service) CreateAgent(ctx context.Context, req AgentRequest) (Agent, error) {
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
			if field, message, ok := policyDecodeProblem(err); ok {
				fe.add("policy."+field, message)
			} else {
				fe.add("policy", "must be an AgentPolicy object")
			}
		} else {
			pol.validate(&fe)
		}
	}
	if e := fe.err(); e != nil {
		return Agent{}, e
	}
	policy, err := json.Marshal(pol)
	if err != nil {
		return Agent{}, err
	}
	now := s.now()
	a := store.Agent{ID: ids.New("Agent"), CustomerID: req.CustomerID, Name: strings.TrimSpace(req.Name), Policy: policy, CreatedAt: now, UpdatedAt: now}
	return commit(ctx, s, "", func(tx store.Tx) (Agent, error) {
		if _, err := tx.GetCustomer(ctx, a.CustomerID); errors.Is(err, store.ErrNotFound) {
			return Agent{}, invalidField("customerId", "no customer with this id")
		} else if err != nil {
			return Agent{}, err
		}
		if err := tx.CreateAgent(ctx, &a); err != nil {
			return Agent{}, err
		}
		return renderAgent(&a, false), nil
	})
}

// policyDecodeProblem names the member of a policy that failed to decode:
// one of the wrong type, or one AgentPolicy does not have. ok is false for
// any other problem (not an object, malformed JSON).
func policyDecodeProblem(err error) (field, message string, ok bool) {
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return "", "", false
		}
		return typeErr.Field, "must be of type " + typeErr.Type.String(), true
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return name, "unknown field", true
	}
	return "", "", false
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

// agentNow is the agent as it is in tx, with whether it holds a token.
func agentNow(ctx context.Context, tx store.Tx, a *store.Agent) (Agent, error) {
	connected, err := tx.AgentConnected(ctx, a.ID)
	if err != nil {
		return Agent{}, err
	}
	return renderAgent(a, connected), nil
}

// GetAgent is an agent (GET /agents/{agentId}).
func (s *Service) GetAgent(ctx context.Context, id string) (Agent, error) {
	return read(ctx, s, func(tx store.Tx) (Agent, error) {
		a, err := loadAgent(ctx, tx, id)
		if err != nil {
			return Agent{}, err
		}
		return agentNow(ctx, tx, a)
	})
}

// AgentUpdate is the request of UpdateAgent (the body of PATCH
// /agents/{agentId}); IsPaused is required.
type AgentUpdate struct {
	IsPaused *bool `json:"isPaused"`
}

// UpdateAgent pauses or resumes an agent (PATCH /agents/{agentId}
// {isPaused}): pausing stops every agent request at once; resuming allows
// them again.
func (s *Service) UpdateAgent(ctx context.Context, id string, req AgentUpdate) (Agent, error) {
	if req.IsPaused == nil {
		return Agent{}, invalidField("isPaused", "required")
	}
	return commit(ctx, s, "", func(tx store.Tx) (Agent, error) {
		a, err := loadAgent(ctx, tx, id)
		if err != nil {
			return Agent{}, err
		}
		if err := tx.SetAgentPaused(ctx, a.ID, *req.IsPaused, s.now()); err != nil {
			return Agent{}, err
		}
		if a, err = tx.GetAgent(ctx, a.ID); err != nil {
			return Agent{}, err
		}
		return agentNow(ctx, tx, a)
	})
}

// DeviceCode is a new device code of an agent.
type DeviceCode struct {
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

// CreateDeviceCode gives an agent a device code that lives ten minutes
// (POST /agents/{agentId}/device-codes); a new code ends the agent's
// earlier unredeemed ones.
func (s *Service) CreateDeviceCode(ctx context.Context, agentID string) (DeviceCode, error) {
	code, err := newDeviceCode()
	if err != nil {
		return DeviceCode{}, err
	}
	return commit(ctx, s, "", func(tx store.Tx) (DeviceCode, error) {
		a, err := loadAgent(ctx, tx, agentID)
		if err != nil {
			return DeviceCode{}, err
		}
		now := s.now()
		d := store.DeviceCode{Code: code, AgentID: a.ID, CreatedAt: now, ExpiresAt: now.Add(deviceCodeTTL)}
		if err := tx.CreateDeviceCode(ctx, &d); err != nil {
			return DeviceCode{}, err
		}
		return DeviceCode{Code: d.Code, AgentID: d.AgentID, ExpiresAt: timestamp(d.ExpiresAt)}, nil
	})
}

// DeviceCodeStatus is whether a device code was redeemed.
type DeviceCodeStatus struct {
	Code     string `json:"code"`
	Redeemed bool   `json:"redeemed"`
}

var errNoDeviceCode = errorf(CodeNotFound, "no such device code")

// DeviceCodeStatus tells whether a device code was redeemed (GET
// /agents/device-codes/{code}/status).
func (s *Service) DeviceCodeStatus(ctx context.Context, code string) (DeviceCodeStatus, error) {
	d, err := read(ctx, s, func(tx store.Tx) (*store.DeviceCode, error) { return tx.GetDeviceCode(ctx, code) })
	if errors.Is(err, store.ErrNotFound) {
		return DeviceCodeStatus{}, errNoDeviceCode
	}
	if err != nil {
		return DeviceCodeStatus{}, err
	}
	return DeviceCodeStatus{Code: d.Code, Redeemed: !d.RedeemedAt.IsZero()}, nil
}

// AgentAccess is the answer of RedeemDeviceCode: the agent and its access
// token, which is never shown again.
type AgentAccess struct {
	AccessToken string          `json:"accessToken"`
	AgentID     string          `json:"agentId"`
	AgentName   string          `json:"agentName"`
	Policy      json.RawMessage `json:"policy"`
}

// RedeemDeviceCode exchanges a device code for the agent's access token
// (POST /agents/device-codes/{code}/redeem). It needs no credential (the
// code is the proof), works once, and returns the access token, which is
// never shown again: the service keeps only its SHA-256 hash.
func (s *Service) RedeemDeviceCode(ctx context.Context, code string) (AgentAccess, error) {
	var raw [20]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return AgentAccess{}, err
	}
	token := "gat_" + hex.EncodeToString(raw[:])
	hash := sha256.Sum256([]byte(token))
	return commit(ctx, s, "", func(tx store.Tx) (AgentAccess, error) {
		d, err := tx.GetDeviceCode(ctx, code)
		if errors.Is(err, store.ErrNotFound) {
			return AgentAccess{}, errNoDeviceCode
		}
		if err != nil {
			return AgentAccess{}, err
		}
		now := s.now()
		won, err := tx.RedeemDeviceCode(ctx, code, now)
		if err != nil {
			return AgentAccess{}, err
		}
		if !won {
			return AgentAccess{}, errorf("EXPIRED", "this device code was already redeemed or has expired")
		}
		a, err := tx.GetAgent(ctx, d.AgentID)
		if err != nil {
			return AgentAccess{}, err
		}
		if err := tx.CreateAgentToken(ctx, &store.AgentToken{TokenHash: hash[:], AgentID: a.ID, CreatedAt: now}); err != nil {
			return AgentAccess{}, err
		}
		return AgentAccess{AccessToken: token, AgentID: a.ID, AgentName: a.Name, Policy: a.Policy}, nil
	})
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
