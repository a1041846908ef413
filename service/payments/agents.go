package payments

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/service/strictjson"
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

// validate names every bad member of the policy, each path after prefix
// ("policy." in a CreateAgent body, "" in a policy update).
func (p *agentPolicy) validate(fe *fieldErrors, prefix string) {
	if len(p.Permissions) == 0 {
		fe.add(prefix+"permissions", "required: at least one permission")
	}
	for i, perm := range p.Permissions {
		if !slices.Contains(agentPermissions, perm) {
			fe.addConstraint(prefix+"permissions["+strconv.Itoa(i)+"]", "unknown permission", wire.FieldConstraint{Enum: agentPermissions})
		}
	}
	modes := []string{"AUTO", "APPROVAL_REQUIRED"}
	if p.DefaultExecutionMode == "" {
		fe.add(prefix+"defaultExecutionMode", "required")
	} else if !slices.Contains(modes, p.DefaultExecutionMode) {
		fe.addConstraint(prefix+"defaultExecutionMode", "must be AUTO or APPROVAL_REQUIRED", wire.FieldConstraint{Enum: modes})
	}
	sl := p.SpendingLimits
	if sl == nil {
		fe.add(prefix+"spendingLimits", "required")
	} else {
		if !currencyCode(sl.Currency) {
			fe.add(prefix+"spendingLimits.currency", "required: a currency code")
		}
		if sl.PerTransactionLimit == nil {
			fe.add(prefix+"spendingLimits.perTransactionLimit", "required")
		}
		for name, v := range map[string]*int64{"perTransactionLimit": sl.PerTransactionLimit, "dailyLimit": sl.DailyLimit, "dailyTransactionLimit": sl.DailyTransactionLimit, "monthlyLimit": sl.MonthlyLimit} {
			if v != nil && *v < 0 {
				fe.add(prefix+"spendingLimits."+name, "must not be negative")
			}
		}
	}
	if ar := p.AccountRestrictions; ar != nil {
		for i, id := range ar.AllowedAccountIDs {
			if !ids.Valid("ExternalAccount", id) && !ids.Valid("InternalAccount", id) {
				fe.add(prefix+"accountRestrictions.allowedAccountIds["+strconv.Itoa(i)+"]", "must be an account id")
			}
		}
		for i, rule := range ar.AccountRules {
			if rule.AccountID == "" {
				fe.add(prefix+"accountRestrictions.accountRules["+strconv.Itoa(i)+"].accountId", "required")
			} else if !ids.Valid("ExternalAccount", rule.AccountID) && !ids.Valid("InternalAccount", rule.AccountID) {
				fe.add(prefix+"accountRestrictions.accountRules["+strconv.Itoa(i)+"].accountId", "must be an account id")
			}
			if v := rule.PerTransactionLimit; v != nil && *v < 0 {
				fe.add(prefix+"accountRestrictions.accountRules["+strconv.Itoa(i)+"].perTransactionLimit", "must not be negative")
			}
			if rule.ExecutionMode != "" && !slices.Contains(modes, rule.ExecutionMode) {
				fe.addConstraint(prefix+"accountRestrictions.accountRules["+strconv.Itoa(i)+"].executionMode", "must be AUTO or APPROVAL_REQUIRED", wire.FieldConstraint{Enum: modes})
			}
		}
	}
	if at := p.ApprovalThresholds; at != nil {
		if at.Currency != "" && !currencyCode(at.Currency) {
			fe.add(prefix+"approvalThresholds.currency", "must be a currency code")
		}
		if at.Amount == nil {
			fe.add(prefix+"approvalThresholds.amount", "required")
		} else if *at.Amount < 0 {
			fe.add(prefix+"approvalThresholds.amount", "must not be negative")
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

// AgentUsage counts an agent's spending against its limits: its executed
// actions of the current UTC day and month, in the smallest unit of the
// policy's spendingLimits.currency.
type AgentUsage struct {
	DailyTransactionCount int64  `json:"dailyTransactionCount"`
	DailySpend            int64  `json:"dailySpend"`
	DailyResetDate        string `json:"dailyResetDate,omitempty"`
	MonthlySpend          int64  `json:"monthlySpend"`
	MonthlyResetMonth     string `json:"monthlyResetMonth,omitempty"`
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
			problems := strictjson.Problems(req.Policy, &pol, "policy")
			for _, p := range problems {
				fe.add(p.Field, p.Message)
			}
			if len(problems) == 0 {
				fe.add("policy", "must be an AgentPolicy object")
			}
		} else {
			pol.validate(&fe, "policy.")
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
	return commit(ctx, s, "", nil, func(tx store.Tx) (Agent, error) {
		c, err := tx.GetCustomer(ctx, a.CustomerID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return Agent{}, invalidField("customerId", "no customer with this id")
		case err != nil:
			return Agent{}, err
		case !c.DeletedAt.IsZero():
			return Agent{}, errCustomerDeleted(c.ID)
		}
		if err := tx.CreateAgent(ctx, &a); err != nil {
			return Agent{}, err
		}
		return renderAgent(&a, false), nil
	})
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

// agentNow is the agent as it is in tx, with whether it holds a token and
// its usage now.
func (s *Service) agentNow(ctx context.Context, tx store.Tx, a *store.Agent) (Agent, error) {
	connected, err := tx.AgentConnected(ctx, a.ID)
	if err != nil {
		return Agent{}, err
	}
	out := renderAgent(a, connected)
	policy, err := policyOf(a)
	if err != nil {
		return Agent{}, err
	}
	if out.Usage, err = s.agentUsage(ctx, tx, a, &policy); err != nil {
		return Agent{}, err
	}
	return out, nil
}

// GetAgent is an agent (GET /agents/{agentId}).
func (s *Service) GetAgent(ctx context.Context, id string) (Agent, error) {
	return read(ctx, s, func(tx store.Tx) (Agent, error) {
		a, err := loadAgent(ctx, tx, id)
		if err != nil {
			return Agent{}, err
		}
		return s.agentNow(ctx, tx, a)
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
	return commit(ctx, s, "", nil, func(tx store.Tx) (Agent, error) {
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
		return s.agentNow(ctx, tx, a)
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
	return commit(ctx, s, "", nil, func(tx store.Tx) (DeviceCode, error) {
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
	return commit(ctx, s, "", nil, func(tx store.Tx) (AgentAccess, error) {
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
func (s *Service) AuthenticateAgent(ctx context.Context, token string) (AgentPrincipal, error) {
	if token == "" {
		return AgentPrincipal{}, ErrAgentUnauthorized
	}
	hash := sha256.Sum256([]byte(token))
	a, err := read(ctx, s, func(tx store.Tx) (*store.Agent, error) { return tx.AgentByToken(ctx, hash[:]) })
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return AgentPrincipal{}, ErrAgentUnauthorized
		}
		return AgentPrincipal{}, err
	}
	if a.IsPaused {
		return AgentPrincipal{}, errorf(CodeForbidden, "this agent is paused")
	}
	return AgentPrincipal{ID: a.ID, CustomerID: a.CustomerID, agent: a}, nil
}

// AgentPrincipal is the agent an access token authenticated
// (AuthenticateAgent): who calls the agent's own operations, with its
// policy as it was when the request came.
type AgentPrincipal struct {
	ID, CustomerID string
	agent          *store.Agent
}

// ErrAgentUnauthorized refuses an agent request without a valid token.
var ErrAgentUnauthorized = errorf(CodeUnauthorized, "an agent access token (Authorization: Bearer gat_…) is required")

// # The agent's own operations (/agents/me)
//
// Every operation below acts for the agent's customer only, under its
// policy: the permission the reference names for it (403 FORBIDDEN
// without), the policy's allow-list (accountRestrictions.allowedAccountIds:
// when set, every account the agent reads or uses, internal or external,
// must be on it), and for money, the spending limits. An id of another
// customer, or off the allow-list, is answered exactly as a missing one.
// The operations reuse the customer operations once the policy is applied.

// policyOf is the agent's stored policy.
func policyOf(a *store.Agent) (agentPolicy, error) {
	var p agentPolicy
	if err := json.Unmarshal(a.Policy, &p); err != nil {
		return agentPolicy{}, fmt.Errorf("payments: the stored policy of agent %s: %w", a.ID, err)
	}
	return p, nil
}

// allowList is the policy's allow-list: nil when every account of the
// customer is allowed.
func (p *agentPolicy) allowList() []string {
	if p.AccountRestrictions == nil || p.AccountRestrictions.AllowedAccountIDs == nil {
		return nil
	}
	return p.AccountRestrictions.AllowedAccountIDs
}

// allows reports whether the allow-list lets the agent use account id.
func (p *agentPolicy) allows(id string) bool {
	l := p.allowList()
	return l == nil || slices.Contains(l, id)
}

// agentPolicyFor is the agent's policy when it holds one of perms (403
// FORBIDDEN naming them otherwise).
func agentPolicyFor(a *store.Agent, perms ...string) (agentPolicy, error) {
	p, err := policyOf(a)
	if err != nil {
		return agentPolicy{}, err
	}
	for _, perm := range perms {
		if slices.Contains(p.Permissions, perm) {
			return p, nil
		}
	}
	return agentPolicy{}, &Error{Code: CodeForbidden,
		Message: "the agent's policy lacks " + strings.Join(perms, " or "),
		Details: map[string]any{"requiredPermissions": perms}}
}

// GetAgentMe is the agent itself, with its policy and usage (GET
// /agents/me). It needs no permission.
func (s *Service) GetAgentMe(ctx context.Context, caller AgentPrincipal) (Agent, error) {
	agent := caller.agent
	return read(ctx, s, func(tx store.Tx) (Agent, error) {
		a, err := tx.GetAgent(ctx, agent.ID)
		if err != nil {
			return Agent{}, err
		}
		return s.agentNow(ctx, tx, a)
	})
}

// agentPeriods are the starts of the UTC day and month of now.
func agentPeriods(now time.Time) (day, month time.Time) {
	now = now.UTC()
	day = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	month = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	return day, month
}

// agentUsage counts the agent's executions of the current UTC day and month
// in the policy's limit currency.
func (s *Service) agentUsage(ctx context.Context, tx store.Tx, a *store.Agent, p *agentPolicy) (AgentUsage, error) {
	day, month := agentPeriods(s.now())
	var u AgentUsage
	u.DailyResetDate = day.AddDate(0, 0, 1).Format(time.DateOnly)
	u.MonthlyResetMonth = month.AddDate(0, 1, 0).Format("2006-01")
	if p.SpendingLimits == nil {
		return u, nil
	}
	var err error
	if u.DailyTransactionCount, u.DailySpend, err = tx.AgentUsage(ctx, a.ID, p.SpendingLimits.Currency, day); err != nil {
		return AgentUsage{}, err
	}
	if _, u.MonthlySpend, err = tx.AgentUsage(ctx, a.ID, p.SpendingLimits.Currency, month); err != nil {
		return AgentUsage{}, err
	}
	return u, nil
}

// AgentInternalAccountFilter is the query of AgentInternalAccounts.
type AgentInternalAccountFilter struct {
	Type     string `query:"type"`
	Currency string `query:"currency"`
	Page     PageRequest
}

// AgentInternalAccounts is a page of the internal accounts of the agent's
// customer that its allow-list lets it use (GET
// /agents/me/internal-accounts); they show balances, so it needs
// VIEW_TRANSACTIONS ("list and retrieve transactions and account
// balances").
func (s *Service) AgentInternalAccounts(ctx context.Context, caller AgentPrincipal, req AgentInternalAccountFilter) (wire.List[wire.InternalAccount], error) {
	agent := caller.agent
	p, err := agentPolicyFor(agent, "VIEW_TRANSACTIONS")
	if err != nil {
		return wire.List[wire.InternalAccount]{}, err
	}
	var fe fieldErrors
	f := internalAccountFilter(InternalAccountFilter{Type: req.Type, Currency: req.Currency, Page: req.Page}, &fe)
	f.CustomerID, f.IDs = agent.CustomerID, p.allowList()
	if e := fe.err(); e != nil {
		return wire.List[wire.InternalAccount]{}, e
	}
	return s.listInternalAccounts(ctx, f)
}

// AgentExternalAccountFilter is the query of AgentExternalAccounts.
type AgentExternalAccountFilter struct {
	Currency string `query:"currency"`
	Page     PageRequest
}

// AgentExternalAccounts is a page of the external accounts of the agent's
// customer that its allow-list lets it use (GET
// /agents/me/external-accounts), with MANAGE_EXTERNAL_ACCOUNTS.
func (s *Service) AgentExternalAccounts(ctx context.Context, caller AgentPrincipal, req AgentExternalAccountFilter) (wire.List[wire.ExternalAccount], error) {
	agent := caller.agent
	p, err := agentPolicyFor(agent, "MANAGE_EXTERNAL_ACCOUNTS")
	if err != nil {
		return wire.List[wire.ExternalAccount]{}, err
	}
	var fe fieldErrors
	f := store.ExternalAccountFilter{CustomerID: agent.CustomerID, Currency: req.Currency, IDs: p.allowList()}
	f.Limit, f.Cursor = req.Page.check("ExternalAccount", &fe)
	if f.Currency != "" && !currencyCode(f.Currency) {
		fe.addConstraint("currency", "must be a currency code such as USD or BTC", wire.FieldConstraint{Pattern: "^[A-Z]{3,4}$"})
	}
	if e := fe.err(); e != nil {
		return wire.List[wire.ExternalAccount]{}, e
	}
	return listPage(ctx, s, func(tx store.Tx) (store.Page[store.ExternalAccount], error) { return tx.ListExternalAccounts(ctx, f) },
		func(a *store.ExternalAccount) wire.ExternalAccount { return externalAccountJSON(a) })
}

// AgentCreateExternalAccount adds an external account for the agent's
// customer (POST /agents/me/external-accounts), with
// MANAGE_EXTERNAL_ACCOUNTS. customerId may be omitted (it is the agent's
// customer) and may name no other customer. An account the allow-list does
// not name is created but stays out of the agent's reach until the
// platform adds it to the policy.
func (s *Service) AgentCreateExternalAccount(ctx context.Context, caller AgentPrincipal, body map[string]any) (wire.ExternalAccount, error) {
	agent := caller.agent
	if _, err := agentPolicyFor(agent, "MANAGE_EXTERNAL_ACCOUNTS"); err != nil {
		return wire.ExternalAccount{}, err
	}
	if body == nil {
		return wire.ExternalAccount{}, errorf(CodeInvalidRequestFormat, "the body must be a JSON object")
	}
	_, _, fe := checkExternalAccountBody(body)
	if v, present := body["customerId"]; present {
		if id, ok := v.(string); ok && id != agent.CustomerID {
			fe.add("customerId", "must be omitted or be the agent's customer")
		}
	}
	if e := fe.err(); e != nil {
		return wire.ExternalAccount{}, e
	}
	scoped := maps.Clone(body)
	scoped["customerId"] = agent.CustomerID
	return s.CreateExternalAccount(ctx, ExternalAccountRequest{Body: scoped})
}

// AgentExternalAccount is an external account as the agent may see it (GET
// /agents/me/external-accounts/{id}): only accounts of the agent's customer
// (and of its allow-list, when the policy has one), with
// MANAGE_EXTERNAL_ACCOUNTS. Any other account is 404, exactly as a missing
// one.
func (s *Service) AgentExternalAccount(ctx context.Context, caller AgentPrincipal, id string) (wire.ExternalAccount, error) {
	agent := caller.agent
	p, err := agentPolicyFor(agent, "MANAGE_EXTERNAL_ACCOUNTS")
	if err != nil {
		return wire.ExternalAccount{}, err
	}
	notFound := errorf(CodeNotFound, "no external account with this id")
	if !p.allows(id) {
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

// AgentTransactionFilter is the query of AgentTransactions: the
// reference's, as text. CustomerID is there to be refused (the agent's
// customer is implied); the sender, receiver and reference filters are not
// offered and are refused rather than ignored.
type AgentTransactionFilter struct {
	CustomerID                string `query:"customerId"`
	AccountIdentifier         string `query:"accountIdentifier"`
	SenderAccountIdentifier   string `query:"senderAccountIdentifier"`
	ReceiverAccountIdentifier string `query:"receiverAccountIdentifier"`
	Reference                 string `query:"reference"`
	Status                    string `query:"status"`
	Type                      string `query:"type"`
	StartDate                 string `query:"startDate"`
	EndDate                   string `query:"endDate"`
	SortOrder                 string `query:"sortOrder"`
	Page                      PageRequest
}

// AgentTransactions is a page of the transactions of the agent's customer
// (GET /agents/me/transactions), with VIEW_TRANSACTIONS; under an
// allow-list, only those whose source or destination is on it.
func (s *Service) AgentTransactions(ctx context.Context, caller AgentPrincipal, req AgentTransactionFilter) (wire.List[wire.Transaction], error) {
	agent := caller.agent
	p, err := agentPolicyFor(agent, "VIEW_TRANSACTIONS")
	if err != nil {
		return wire.List[wire.Transaction]{}, err
	}
	var fe fieldErrors
	if req.CustomerID != "" {
		fe.add("customerId", "is not accepted: the agent's transactions are its customer's")
	}
	for name, v := range map[string]string{"senderAccountIdentifier": req.SenderAccountIdentifier,
		"receiverAccountIdentifier": req.ReceiverAccountIdentifier, "reference": req.Reference} {
		if v != "" {
			fe.add(name, "is not offered by this service; filter with accountIdentifier")
		}
	}
	f := transactionFilter(TransactionFilter{AccountID: req.AccountIdentifier, Status: req.Status, Type: req.Type,
		StartDate: req.StartDate, EndDate: req.EndDate, SortOrder: req.SortOrder, Page: req.Page}, "accountIdentifier", &fe)
	f.CustomerID, f.AccountIDs = agent.CustomerID, p.allowList()
	if e := fe.err(); e != nil {
		return wire.List[wire.Transaction]{}, e
	}
	return s.listTransactions(ctx, f)
}

// agentSees reports whether a transaction is the agent's to see: its
// customer's, and under an allow-list, touching an account on it.
func agentSees(agent *store.Agent, p *agentPolicy, x *store.Transaction) bool {
	if x.CustomerID != agent.CustomerID {
		return false
	}
	return p.allowList() == nil || (x.SourceAccountID != "" && p.allows(x.SourceAccountID)) || p.allows(x.DestinationAccountID)
}

// AgentTransaction is one transaction of the agent's customer (GET
// /agents/me/transactions/{transactionId}), with VIEW_TRANSACTIONS; any
// other is 404 TRANSACTION_NOT_FOUND, as a missing one.
func (s *Service) AgentTransaction(ctx context.Context, caller AgentPrincipal, id string) (wire.Transaction, error) {
	agent := caller.agent
	p, err := agentPolicyFor(agent, "VIEW_TRANSACTIONS")
	if err != nil {
		return wire.Transaction{}, err
	}
	return read(ctx, s, func(tx store.Tx) (wire.Transaction, error) {
		x, err := loadTransaction(ctx, tx, id)
		if err != nil {
			return wire.Transaction{}, err
		}
		if !agentSees(agent, &p, x) {
			return wire.Transaction{}, errTransactionNotFound
		}
		return s.transactionJSON(x), nil
	})
}

// spendIn is amount (smallest units of from) in smallest units of to, at
// the rates source's price now of buying from with to (the spread
// included, rounded up): what the payment costs in the limit's currency.
func (s *Service) spendIn(to, from string, amount int64) (int64, error) {
	if to == from {
		return amount, nil
	}
	rows, err := s.rates.ExchangeRates(to, []string{from}, 0)
	fc, okFrom := s.rates.Currency(from)
	tc, okTo := s.rates.Currency(to)
	if err != nil || len(rows) == 0 || !okFrom || !okTo || rows[0].ExchangeRate <= 0 {
		return 0, &Error{Code: CodeForbidden,
			Message: "the agent's spending limits are in " + to + ", and the service has no exchange rate to value " + from + " in it",
			Details: map[string]any{"reason": "LIMIT_CURRENCY_UNAVAILABLE", "currency": to}}
	}
	v := float64(amount) * rows[0].ExchangeRate * math.Pow10(tc.Decimals-fc.Decimals)
	if v >= math.MaxInt64/2 {
		return math.MaxInt64 / 2, nil
	}
	return int64(math.Ceil(v - 1e-9)), nil
}

// exceeds tells whether used+spend (all non-negative) is above limit,
// without computing a sum that could wrap: a limit near the int64 maximum
// must not let a large spend wrap around to a negative total and pass.
func exceeds(used, spend, limit int64) bool {
	return used > limit || spend > limit-used
}

// addCapped is used+spend for a message, at most the int64 maximum.
func addCapped(used, spend int64) int64 {
	if spend > math.MaxInt64-used {
		return math.MaxInt64
	}
	return used + spend
}

// overLimit is the refusal of a payment past one of the policy's limits.
func overLimit(limit string, max, amount int64, currency string) error {
	return &Error{Code: CodeForbidden,
		Message: fmt.Sprintf("spending limit exceeded: %s is %d %s and this payment would make it %d", limit, max, currency, amount),
		Details: map[string]any{"reason": "SPENDING_LIMIT_EXCEEDED", "limit": limit, "limitAmount": max, "amount": amount, "currency": currency}}
}

// accountRule is the policy's rule for an account, if it has one.
func (p *agentPolicy) accountRule(id string) (executionMode string, perTransaction *int64) {
	if p.AccountRestrictions == nil {
		return "", nil
	}
	for _, r := range p.AccountRestrictions.AccountRules {
		if r.AccountID == id {
			return r.ExecutionMode, r.PerTransactionLimit
		}
	}
	return "", nil
}

// checkPerTransaction refuses a payment of spend (in the limit currency)
// from source above the per-transaction limit (the source's account rule
// overrides the policy's).
func (p *agentPolicy) checkPerTransaction(source string, spend int64) error {
	sl := p.SpendingLimits
	if sl == nil {
		return nil
	}
	limit := sl.PerTransactionLimit
	if _, rule := p.accountRule(source); rule != nil {
		limit = rule
	}
	if limit != nil && spend > *limit {
		return overLimit("perTransactionLimit", *limit, spend, sl.Currency)
	}
	return nil
}

// agentAccountProblems names the accounts of a quote request that the agent
// may not use, with the words CreateQuote uses for missing ones: another
// customer's account, or one off the allow-list, must look missing.
func (s *Service) agentAccountProblems(ctx context.Context, agent *store.Agent, p *agentPolicy, req *QuoteRequest, fe *fieldErrors) error {
	return s.store.Tx(ctx, func(tx store.Tx) error {
		if req.Source != nil && ids.Valid("InternalAccount", req.Source.AccountID) {
			a, err := tx.GetInternalAccount(ctx, req.Source.AccountID)
			switch {
			case errors.Is(err, store.ErrNotFound):
			case err != nil:
				return err
			case a.CustomerID != agent.CustomerID || !p.allows(a.ID):
				fe.add("source.accountId", "no internal account with this id")
			}
		}
		if req.Destination != nil && ids.Valid("ExternalAccount", req.Destination.AccountID) {
			a, err := tx.GetExternalAccount(ctx, req.Destination.AccountID)
			switch {
			case errors.Is(err, store.ErrNotFound):
			case err != nil:
				return err
			case a.CustomerID != agent.CustomerID || !p.allows(a.ID):
				fe.add("destination.accountId", noDestinationMessage)
			}
		}
		return nil
	})
}

// AgentCreateQuote prices a payment for the agent's customer (POST
// /agents/me/quotes), with CREATE_QUOTES: both accounts must be the
// customer's and on the allow-list (any other is answered as a missing
// one), source.customerId may only name the agent's customer, and
// immediatelyExecute is refused (execution is its own permission, with its
// own checks). A quote above the per-transaction limit is refused (403
// FORBIDDEN, reason SPENDING_LIMIT_EXCEEDED) and not stored. The quote is
// recorded as the agent's, in the transaction that stores it.
//
// It runs under o's Idempotency-Key.
func (s *Service) AgentCreateQuote(ctx context.Context, o Once, caller AgentPrincipal, req QuoteRequest) (Answer, error) {
	agent := caller.agent
	return once(ctx, s, o, func(fin *then) (wire.Quote, error) { return s.agentCreateQuote(ctx, agent, req, fin) })
}

func (s *Service) agentCreateQuote(ctx context.Context, agent *store.Agent, req QuoteRequest, fin *then) (wire.Quote, error) {
	p, err := agentPolicyFor(agent, "CREATE_QUOTES")
	if err != nil {
		return wire.Quote{}, err
	}
	fe := req.check()
	if req.ImmediatelyExecute {
		fe.add("immediatelyExecute", "is not offered to agents: execute the quote with POST /agents/me/quotes/{quoteId}/execute")
	}
	if req.Source != nil && req.Source.SourceType == "REALTIME_FUNDING" {
		fe.add("source.sourceType", "REALTIME_FUNDING is not offered to agents: an agent pays from an internal account of its allow-list (ACCOUNT)")
	}
	if req.Source != nil && req.Source.CustomerID != "" && req.Source.CustomerID != agent.CustomerID {
		fe.add("source.customerId", "must be omitted or be the agent's customer")
	}
	if err := s.agentAccountProblems(ctx, agent, &p, &req, &fe); err != nil {
		return wire.Quote{}, err
	}
	if e := fe.err(); e != nil {
		return wire.Quote{}, e
	}
	record := andThen(fin, func(ctx context.Context, tx store.Tx, result any) (any, error) {
		q := result.(wire.Quote)
		if sl := p.SpendingLimits; sl != nil {
			spend, err := s.spendIn(sl.Currency, q.SendingCurrency.Code, q.TotalSendingAmount)
			if err != nil {
				return nil, err
			}
			if err := p.checkPerTransaction(q.Source.AccountID, spend); err != nil {
				return nil, err
			}
		}
		if err := tx.CreateAgentQuote(ctx, &store.AgentQuote{QuoteID: q.ID, AgentID: agent.ID, CreatedAt: s.now()}); err != nil {
			return nil, err
		}
		return q, nil
	})
	return s.createQuote(ctx, req, record)
}

// loadAgentQuote is a quote the agent created, with its transaction; any
// other (another agent's, the platform's, one whose accounts the
// allow-list no longer names) is QUOTE_NOT_FOUND, as a missing one.
func loadAgentQuote(ctx context.Context, tx store.Tx, agent *store.Agent, p *agentPolicy, id string) (*store.Quote, *store.Transaction, error) {
	q, x, err := loadQuote(ctx, tx, id)
	if err != nil {
		return nil, nil, err
	}
	owner, err := tx.GetAgentQuote(ctx, q.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errQuoteNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	if owner.AgentID != agent.ID || q.CustomerID != agent.CustomerID || !p.allows(q.SourceAccountID) || !p.allows(q.DestinationAccountID) {
		return nil, nil, errQuoteNotFound
	}
	return q, x, nil
}

// AgentGetQuote is a quote the agent created (GET /agents/me/quotes/{id}),
// with CREATE_QUOTES or EXECUTE_QUOTES.
func (s *Service) AgentGetQuote(ctx context.Context, caller AgentPrincipal, id string) (wire.Quote, error) {
	agent := caller.agent
	p, err := agentPolicyFor(agent, "CREATE_QUOTES", "EXECUTE_QUOTES")
	if err != nil {
		return wire.Quote{}, err
	}
	return read(ctx, s, func(tx store.Tx) (wire.Quote, error) {
		q, x, err := loadAgentQuote(ctx, tx, agent, &p, id)
		if err != nil {
			return wire.Quote{}, err
		}
		return s.quoteJSON(q, x), nil
	})
}

// AgentAction is an action of an agent as the API shows it (AgentAction).
type AgentAction struct {
	ID                 string            `json:"id"`
	AgentID            string            `json:"agentId"`
	CustomerID         string            `json:"customerId"`
	PlatformCustomerID string            `json:"platformCustomerId"`
	Status             string            `json:"status"`
	Type               string            `json:"type"`
	Quote              *wire.Quote       `json:"quote,omitempty"`
	TransferDetails    *TransferDetails  `json:"transferDetails,omitempty"`
	Transaction        *wire.Transaction `json:"transaction,omitempty"`
	RejectionReason    string            `json:"rejectionReason,omitempty"`
	FailureReason      string            `json:"failureReason,omitempty"`
	CreatedAt          string            `json:"createdAt"`
	UpdatedAt          string            `json:"updatedAt"`
}

// agentActionJSON renders an action with its quote and transaction as they
// are in tx.
func (s *Service) agentActionJSON(ctx context.Context, tx store.Tx, a *store.AgentAction) (AgentAction, error) {
	out := AgentAction{ID: a.ID, AgentID: a.AgentID, CustomerID: a.CustomerID, Status: a.Status, Type: a.Type,
		RejectionReason: a.RejectionReason, FailureReason: a.FailureReason,
		CreatedAt: timestamp(a.CreatedAt), UpdatedAt: timestamp(a.UpdatedAt)}
	c, err := tx.GetCustomer(ctx, a.CustomerID)
	if err != nil {
		return AgentAction{}, err
	}
	out.PlatformCustomerID = c.PlatformCustomerID
	if a.QuoteID != "" {
		q, x, err := loadQuote(ctx, tx, a.QuoteID)
		if err != nil {
			return AgentAction{}, err
		}
		quote := s.quoteJSON(q, x)
		out.Quote = &quote
	}
	if a.TransactionID != "" {
		x, err := tx.GetTransaction(ctx, a.TransactionID)
		if err != nil {
			return AgentAction{}, err
		}
		t := s.transactionJSON(x)
		out.Transaction = &t
		if a.Type == "TRANSFER_IN" || a.Type == "TRANSFER_OUT" {
			out.TransferDetails = &TransferDetails{Amount: x.SentAmount, Currency: x.SendingCurrency,
				SourceAccountID: x.SourceAccountID, DestinationAccountID: x.DestinationAccountID}
		}
	}
	if out.TransferDetails == nil && len(a.Request) > 0 {
		// A transfer that has no transaction (yet): as it was asked for.
		req, err := pendingOf(a)
		if err != nil {
			return AgentAction{}, err
		}
		out.TransferDetails = req.Details
	}
	return out, nil
}

// AgentExecuteQuote executes a quote the agent created (POST
// /agents/me/quotes/{quoteId}/execute), with EXECUTE_QUOTES, and answers
// the AgentAction of the execution, APPROVED with its transaction.
//
//   - Approval: when the policy requires the platform's approval for this
//     payment (defaultExecutionMode APPROVAL_REQUIRED unless the source's
//     account rule says AUTO, the source's rule says APPROVAL_REQUIRED, or
//     the amount is above approvalThresholds), nothing moves: the answer
//     is a PENDING_APPROVAL action without transaction, after the checks
//     the execute would make (see submitAgentQuote), and the platform
//     approves it (ApproveAgentAction runs the execute then) or rejects it.
//   - Limits: the amount (totalSendingAmount, valued in the limits'
//     currency) must be within perTransactionLimit (or the source's rule),
//     and with the agent's other executions of the UTC day and month
//     within dailyLimit, dailyTransactionLimit and monthlyLimit: 403
//     FORBIDDEN, reason SPENDING_LIMIT_EXCEEDED, otherwise. The usage is
//     counted and the action recorded in the execute's own transaction, so
//     concurrent executes cannot overrun a limit together.
//   - Signature: the execute is the customer's ExecuteQuote, so money
//     leaves an EMBEDDED_WALLET only with signature, a stamp over the
//     quote's payloadToSign by an active session of that wallet (the
//     reference requires it of agents too); the agent cannot skip it.
//
// It runs under o's Idempotency-Key.
func (s *Service) AgentExecuteQuote(ctx context.Context, o Once, caller AgentPrincipal, id string, signature Stamp) (Answer, error) {
	agent := caller.agent
	return once(ctx, s, o, func(fin *then) (AgentAction, error) {
		return s.agentExecuteQuote(ctx, agent, id, string(signature), fin)
	})
}

func (s *Service) agentExecuteQuote(ctx context.Context, agent *store.Agent, id, signature string, fin *then) (AgentAction, error) {
	p, err := agentPolicyFor(agent, "EXECUTE_QUOTES")
	if err != nil {
		return AgentAction{}, err
	}
	q, _, err := read2(ctx, s, func(tx store.Tx) (*store.Quote, *store.Transaction, error) {
		return loadAgentQuote(ctx, tx, agent, &p, id)
	})
	if err != nil {
		return AgentAction{}, err
	}
	spend, limitCurrency, err := s.agentSpend(&p, q.SendingCurrency, q.TotalSendingAmount)
	if err != nil {
		return AgentAction{}, err
	}
	approval, err := s.agentApproval(&p, q.SourceAccountID, q.SendingCurrency, q.TotalSendingAmount, spend)
	if err != nil {
		return AgentAction{}, err
	}
	if err := p.checkPerTransaction(q.SourceAccountID, spend); err != nil {
		return AgentAction{}, err
	}
	if approval != "" {
		return s.submitAgentQuote(ctx, agent, &p, id, signature, spend, limitCurrency, fin)
	}
	var action AgentAction
	record := andThen(fin, func(ctx context.Context, tx store.Tx, result any) (any, error) {
		out, err := s.recordAgentAction(ctx, tx, agent, &p, "EXECUTE_QUOTE", q.ID, q.TransactionID, spend, limitCurrency)
		if err != nil {
			return nil, err
		}
		action = out
		return out, nil
	})
	if _, err := s.executeQuote(ctx, q.ID, signature, false, record); err != nil {
		return AgentAction{}, err
	}
	return action, nil
}

// agentApproval tells why the policy requires the platform's approval for
// a payment ("" when it does not): defaultExecutionMode APPROVAL_REQUIRED
// unless the source's account rule says AUTO, the source's rule says
// APPROVAL_REQUIRED, or the amount is above approvalThresholds.
func (s *Service) agentApproval(p *agentPolicy, sourceAccountID, currency string, amount, spend int64) (string, error) {
	mode := p.DefaultExecutionMode
	why := "the policy's defaultExecutionMode is APPROVAL_REQUIRED"
	if m, _ := p.accountRule(sourceAccountID); m != "" {
		mode = m
		why = "the policy's rule for " + sourceAccountID + " is APPROVAL_REQUIRED"
	}
	if mode != "APPROVAL_REQUIRED" {
		if at := p.ApprovalThresholds; at != nil && at.Amount != nil {
			cur := at.Currency
			if cur == "" && p.SpendingLimits != nil {
				cur = p.SpendingLimits.Currency
			}
			v := spend
			if p.SpendingLimits == nil || cur != p.SpendingLimits.Currency {
				var err error
				if v, err = s.spendIn(cur, currency, amount); err != nil {
					return "", err
				}
			}
			if v > *at.Amount {
				mode = "APPROVAL_REQUIRED"
				why = fmt.Sprintf("the amount (%d %s) is above the policy's approvalThresholds (%d %s)", v, cur, *at.Amount, cur)
			}
		}
	}
	if mode != "APPROVAL_REQUIRED" {
		return "", nil
	}
	return why, nil
}

// errApprovalRequired refuses a payment that needs the platform's approval
// where it cannot wait for one.
func errApprovalRequired(why, cannot string) error {
	return &Error{Code: CodeForbidden,
		Message: "this payment needs the platform's approval (" + why + "), and " + cannot,
		Details: map[string]any{"reason": "APPROVAL_REQUIRED"}}
}

// read2 is read for a function of two results.
func read2[A, B any](ctx context.Context, s *Service, fn func(tx store.Tx) (A, B, error)) (A, B, error) {
	var a A
	var b B
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		var err error
		a, b, err = fn(tx)
		return err
	})
	return a, b, err
}

// AgentActionFilter is the query of AgentActions.
type AgentActionFilter struct {
	Status string `query:"status"`
	Page   PageRequest
}

var agentActionStatuses = []string{"PENDING_APPROVAL", "APPROVED", "REJECTED", "FAILED"}

// AgentActions is a page of the agent's own actions, newest first (GET
// /agents/me/actions). It needs no permission: they are the agent's.
func (s *Service) AgentActions(ctx context.Context, caller AgentPrincipal, req AgentActionFilter) (wire.List[AgentAction], error) {
	agent := caller.agent
	var fe fieldErrors
	f := store.AgentActionFilter{AgentID: agent.ID, Status: req.Status}
	f.Limit, f.Cursor = req.Page.check("AgentAction", &fe)
	if f.Status != "" && !slices.Contains(agentActionStatuses, f.Status) {
		fe.addConstraint("status", "is not an agent action status", wire.FieldConstraint{Enum: agentActionStatuses})
	}
	if e := fe.err(); e != nil {
		return wire.List[AgentAction]{}, e
	}
	return listPageTx(ctx, s, func(tx store.Tx) (store.Page[store.AgentAction], error) { return tx.ListAgentActions(ctx, f) },
		func(tx store.Tx, a *store.AgentAction) (AgentAction, error) { return s.agentActionJSON(ctx, tx, a) })
}

// AgentGetAction is one of the agent's own actions (GET
// /agents/me/actions/{actionId}); any other id is 404 NOT_FOUND.
func (s *Service) AgentGetAction(ctx context.Context, caller AgentPrincipal, id string) (AgentAction, error) {
	agent := caller.agent
	notFound := errorf(CodeNotFound, "no agent action with this id")
	if !ids.Valid("AgentAction", id) {
		return AgentAction{}, notFound
	}
	return read(ctx, s, func(tx store.Tx) (AgentAction, error) {
		a, err := tx.GetAgentAction(ctx, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && a.AgentID != agent.ID) {
			return AgentAction{}, notFound
		}
		if err != nil {
			return AgentAction{}, err
		}
		return s.agentActionJSON(ctx, tx, a)
	})
}

// AgentDeleteExternalAccount deactivates an external account of the
// agent's customer (DELETE /agents/me/external-accounts/{id}), with
// MANAGE_EXTERNAL_ACCOUNTS; any account the agent may not see is 404, as a
// missing one.
func (s *Service) AgentDeleteExternalAccount(ctx context.Context, caller AgentPrincipal, id string) error {
	if _, err := s.AgentExternalAccount(ctx, caller, id); err != nil {
		return err
	}
	return s.DeactivateExternalAccount(ctx, ExternalAccountRef{ID: id})
}

// # Transfers by an agent (/agents/me/transfer-in, /agents/me/transfer-out)

// TransferDetails is the AgentTransferDetails of a TRANSFER_IN or
// TRANSFER_OUT action: the transfer's amount (smallest unit of currency)
// and its two accounts.
type TransferDetails struct {
	Amount               int64  `json:"amount"`
	Currency             string `json:"currency"`
	SourceAccountID      string `json:"sourceAccountId"`
	DestinationAccountID string `json:"destinationAccountId"`
}

// recordAgentAction counts an action of spend (in limitCurrency) against
// the agent's daily and monthly limits and records it, APPROVED, in tx:
// the operation's own transaction, so that concurrent actions cannot
// overrun a limit together.
func (s *Service) recordAgentAction(ctx context.Context, tx store.Tx, agent *store.Agent, p *agentPolicy, typ, quoteID, transactionID string, spend int64, limitCurrency string) (AgentAction, error) {
	if err := s.checkUsage(ctx, tx, agent.ID, p, spend); err != nil {
		return AgentAction{}, err
	}
	now := s.now()
	a := store.AgentAction{ID: ids.New("AgentAction"), AgentID: agent.ID, CustomerID: agent.CustomerID,
		Type: typ, Status: "APPROVED", QuoteID: quoteID, TransactionID: transactionID,
		Spend: spend, SpendCurrency: limitCurrency, CreatedAt: now, UpdatedAt: now, ExecutedAt: now}
	if err := tx.CreateAgentAction(ctx, &a); err != nil {
		return AgentAction{}, err
	}
	return s.agentActionJSON(ctx, tx, &a)
}

// checkUsage refuses a payment of spend (in the policy's limit currency)
// that, with the agent's other payments of the UTC day and month (counted
// in tx), would pass dailyTransactionLimit, dailyLimit or monthlyLimit.
func (s *Service) checkUsage(ctx context.Context, tx store.Tx, agentID string, p *agentPolicy, spend int64) error {
	if sl := p.SpendingLimits; sl != nil {
		day, month := agentPeriods(s.now())
		count, daily, err := tx.AgentUsage(ctx, agentID, sl.Currency, day)
		if err != nil {
			return err
		}
		_, monthly, err := tx.AgentUsage(ctx, agentID, sl.Currency, month)
		if err != nil {
			return err
		}
		switch {
		case sl.DailyTransactionLimit != nil && exceeds(count, 1, *sl.DailyTransactionLimit):
			return overLimit("dailyTransactionLimit", *sl.DailyTransactionLimit, addCapped(count, 1), "transactions")
		case sl.DailyLimit != nil && exceeds(daily, spend, *sl.DailyLimit):
			return overLimit("dailyLimit", *sl.DailyLimit, addCapped(daily, spend), sl.Currency)
		case sl.MonthlyLimit != nil && exceeds(monthly, spend, *sl.MonthlyLimit):
			return overLimit("monthlyLimit", *sl.MonthlyLimit, addCapped(monthly, spend), sl.Currency)
		}
	}
	return nil
}

// agentTransferAccounts names the accounts of a transfer the agent may not
// use, with the words the customer transfer uses for missing ones: an
// account of another customer, or one off the allow-list, must look
// missing. It answers the currency of the internal account ("" when there
// is none to read; the transfer then refuses the request itself).
func (s *Service) agentTransferAccounts(ctx context.Context, agent *store.Agent, p *agentPolicy, internalID, internalField, externalID, externalField string, fe *fieldErrors) (string, error) {
	var currency string
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		currency = ""
		if ids.Valid("InternalAccount", internalID) {
			a, err := tx.GetInternalAccount(ctx, internalID)
			switch {
			case errors.Is(err, store.ErrNotFound):
			case err != nil:
				return err
			case a.CustomerID != agent.CustomerID || !p.allows(a.ID):
				fe.add(internalField, "no internal account with this id")
			default:
				currency = a.Currency
			}
		}
		if ids.Valid("ExternalAccount", externalID) {
			a, err := tx.GetExternalAccount(ctx, externalID)
			switch {
			case errors.Is(err, store.ErrNotFound):
			case err != nil:
				return err
			case a.CustomerID != agent.CustomerID || !p.allows(a.ID):
				fe.add(externalField, "no external account of the internal account's customer has this id")
			}
		}
		return nil
	})
	return currency, err
}

// agentTransferSpend is what a transfer of amount (in currency) counts
// against the policy's limits, in the limits' currency (currency itself
// when the policy has none), after the per-transaction limit and the
// approval rules have let it through.
func (s *Service) agentTransferSpend(p *agentPolicy, sourceAccountID, currency string, amount int64) (spend int64, limitCurrency, approval string, err error) {
	if spend, limitCurrency, err = s.agentSpend(p, currency, amount); err != nil {
		return 0, "", "", err
	}
	if approval, err = s.agentApproval(p, sourceAccountID, currency, amount, spend); err != nil {
		return 0, "", "", err
	}
	if err := p.checkPerTransaction(sourceAccountID, spend); err != nil {
		return 0, "", "", err
	}
	return spend, limitCurrency, approval, nil
}

// agentSpend is what a payment of amount (in currency) counts against the
// policy's limits, in the limits' currency (currency itself when the policy
// has none).
func (s *Service) agentSpend(p *agentPolicy, currency string, amount int64) (spend int64, limitCurrency string, err error) {
	spend, limitCurrency = amount, currency
	if sl := p.SpendingLimits; sl != nil {
		limitCurrency = sl.Currency
		if spend, err = s.spendIn(sl.Currency, currency, amount); err != nil {
			return 0, "", err
		}
	}
	return spend, limitCurrency, nil
}

// agentTransferHook records the transfer the operation made (its result, a
// wire.Transaction) as the agent's action of type typ, in the transfer's
// own transaction, after counting it against the limits; action receives
// what it answers; fin then runs with that.
func (s *Service) agentTransferThen(agent *store.Agent, p *agentPolicy, typ string, action *AgentAction, fin *then) *then {
	return andThen(fin, func(ctx context.Context, tx store.Tx, result any) (any, error) {
		x := result.(wire.Transaction)
		// The accounts were read before the transfer's transaction; the
		// limits are checked again with the transfer as it was made.
		spend, limitCurrency, approval, err := s.agentTransferSpend(p, x.Source.AccountID, x.ReceivedAmount.Currency.Code, x.ReceivedAmount.Amount)
		if err != nil {
			return nil, err
		}
		if approval != "" {
			// The policy changed since the request was read: do not move
			// money it now wants approved.
			return nil, errApprovalRequired(approval, "the policy changed while the transfer was made: send it again")
		}
		out, err := s.recordAgentAction(ctx, tx, agent, p, typ, "", x.ID, spend, limitCurrency)
		if err != nil {
			return nil, err
		}
		*action = out
		return out, nil
	})
}

// AgentTransferIn pulls money from an external account of the agent's
// customer into one of its internal accounts (POST
// /agents/me/transfer-in), with CREATE_TRANSFERS: the customer's
// TransferIn, both accounts the customer's and on the allow-list (any
// other is answered as a missing one). The amount counts against the
// spending limits as an execute does (perTransactionLimit, the source's
// account rule, approval, then the daily and monthly limits in the
// transfer's own transaction); the answer is the APPROVED AgentAction of
// type TRANSFER_IN with its transaction.
//
// It runs under o's Idempotency-Key.
func (s *Service) AgentTransferIn(ctx context.Context, o Once, caller AgentPrincipal, req TransferInRequest) (Answer, error) {
	agent := caller.agent
	return once(ctx, s, o, func(fin *then) (AgentAction, error) { return s.agentTransferIn(ctx, agent, req, fin) })
}

func (s *Service) agentTransferIn(ctx context.Context, agent *store.Agent, req TransferInRequest, fin *then) (AgentAction, error) {
	p, err := agentPolicyFor(agent, "CREATE_TRANSFERS")
	if err != nil {
		return AgentAction{}, err
	}
	fe := req.check()
	var currency string
	if req.Source != nil && req.Destination != nil {
		if currency, err = s.agentTransferAccounts(ctx, agent, &p, req.Destination.AccountID, "destination.accountId",
			req.Source.AccountID, "source.accountId", &fe); err != nil {
			return AgentAction{}, err
		}
	}
	if e := fe.err(); e != nil {
		return AgentAction{}, e
	}
	if currency != "" {
		spend, limitCurrency, approval, err := s.agentTransferSpend(&p, req.Source.AccountID, currency, *req.Amount)
		if err != nil {
			return AgentAction{}, err
		}
		if approval != "" {
			return s.submitAgentTransfer(ctx, agent, &p, "TRANSFER_IN", approval, spend, limitCurrency, pendingRequest{TransferIn: &req,
				Details: &TransferDetails{Amount: *req.Amount, Currency: currency, SourceAccountID: req.Source.AccountID, DestinationAccountID: req.Destination.AccountID}}, fin)
		}
	}
	var action AgentAction
	if _, err := s.transferIn(ctx, req, s.agentTransferThen(agent, &p, "TRANSFER_IN", &action, fin)); err != nil {
		return AgentAction{}, err
	}
	return action, nil
}

// AgentTransferOut pays an external account of the agent's customer from
// one of its internal accounts (POST /agents/me/transfer-out), with
// CREATE_TRANSFERS, under the same checks as AgentTransferIn; the answer
// is the APPROVED AgentAction of type TRANSFER_OUT. It is the customer's
// TransferOut: from an EMBEDDED_WALLET the first call answers the
// challenge (nothing is recorded, nothing counted) and only the retry
// signed by an active session of the wallet makes the transfer; the agent
// cannot skip the owner's signature.
//
// It runs under o's Idempotency-Key; the first call's challenge is never
// recorded.
func (s *Service) AgentTransferOut(ctx context.Context, o Once, caller AgentPrincipal, req TransferOutRequest, call SignedCall) (Answer, error) {
	agent := caller.agent
	return onceSigned(ctx, s, o, func(fin *then) (Signed[AgentAction], error) { return s.agentTransferOut(ctx, agent, req, call, fin) })
}

func (s *Service) agentTransferOut(ctx context.Context, agent *store.Agent, req TransferOutRequest, call SignedCall, fin *then) (Signed[AgentAction], error) {
	p, err := agentPolicyFor(agent, "CREATE_TRANSFERS")
	if err != nil {
		return Signed[AgentAction]{}, err
	}
	fe := req.check()
	var currency string
	if req.Source != nil && req.Destination != nil {
		if currency, err = s.agentTransferAccounts(ctx, agent, &p, req.Source.AccountID, "source.accountId",
			req.Destination.AccountID, "destination.accountId", &fe); err != nil {
			return Signed[AgentAction]{}, err
		}
	}
	if e := fe.err(); e != nil {
		return Signed[AgentAction]{}, e
	}
	if currency != "" {
		spend, limitCurrency, approval, err := s.agentTransferSpend(&p, req.Source.AccountID, currency, *req.Amount)
		if err != nil {
			return Signed[AgentAction]{}, err
		}
		if approval != "" {
			out, err := s.submitAgentTransfer(ctx, agent, &p, "TRANSFER_OUT", approval, spend, limitCurrency, pendingRequest{TransferOut: &req,
				Details: &TransferDetails{Amount: *req.Amount, Currency: currency, SourceAccountID: req.Source.AccountID, DestinationAccountID: req.Destination.AccountID}}, fin)
			if err != nil {
				return Signed[AgentAction]{}, err
			}
			return done(out), nil
		}
	}
	var action AgentAction
	out, err := s.transferOut(ctx, req, call, s.agentTransferThen(agent, &p, "TRANSFER_OUT", &action, fin))
	if err != nil {
		return Signed[AgentAction]{}, err
	}
	if out.Challenge != nil {
		return challenged[AgentAction](out.Challenge), nil
	}
	return done(action), nil
}
