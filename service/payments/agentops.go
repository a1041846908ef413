package payments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/service/strictjson"
	"paywallet/shared/wire"
)

// # Managing agents, and the platform's approval of what they do
//
// The platform lists its agents, deletes them, changes their policies, and
// decides the actions its agents' policies hold for approval.
//
// An action that needs approval (an execute or a transfer whose policy says
// APPROVAL_REQUIRED for it) is checked as if it ran now — the quote is
// PENDING and its accounts ACTIVE, the wallet's signature verifies, the
// amount is within the per-transaction limit and, with the day's and the
// month's other payments, within the others — and recorded
// PENDING_APPROVAL with what it needs to run later; nothing is held and
// nothing counts against the limits yet. AGENT_ACTION.PENDING_APPROVAL is
// emitted in the same transaction.
//
// Approving runs the operation then, as the agent's request would have
// (ExecuteQuote, TransferIn, TransferOut: holds, balances, events, the
// wallet signature), with the limits of the agent's policy as it is at
// approval counted in the operation's own transaction, and the action
// moved from PENDING_APPROVAL to APPROVED there by compare-and-set: of
// concurrent approvals one runs, the others are 409 CONFLICT and nothing
// runs twice. When the operation refuses (the quote expired or was
// executed otherwise, the balance is short, a limit would be passed, the
// signature no longer verifies) nothing moves and the action becomes
// FAILED with failureReason, answered 200 as the reference says.
//
// The signature an agent gives with an execute from an EMBEDDED_WALLET (a
// stamp over the quote's payloadToSign) is verified when the action is
// submitted and kept in the action's row; the approval runs the execute
// with it, so it must still verify then, by the key of a session of that
// wallet that is ACTIVE at approval time. A transfer-out from an
// EMBEDDED_WALLET signs a one-time challenge of the transfer-out
// operation, which cannot wait for an approval: such a transfer that needs
// approval is refused (403 FORBIDDEN, reason APPROVAL_REQUIRED); a quote
// is the way for it.

// agentActionPendingApproval is the reference's webhook type for an action
// waiting for the platform.
const agentActionPendingApproval = "AGENT_ACTION.PENDING_APPROVAL"

// pendingRequest is what a PENDING_APPROVAL action keeps to run later
// (store.AgentAction.Request).
type pendingRequest struct {
	// Signature is the agent's Service-Wallet-Signature of an execute
	// from an embedded wallet.
	Signature   string              `json:"signature,omitempty"`
	TransferIn  *TransferInRequest  `json:"transferIn,omitempty"`
	TransferOut *TransferOutRequest `json:"transferOut,omitempty"`
	// Details are the transferDetails shown until there is a transaction.
	Details *TransferDetails `json:"details,omitempty"`
}

func pendingOf(a *store.AgentAction) (pendingRequest, error) {
	var r pendingRequest
	if len(a.Request) == 0 {
		return r, nil
	}
	if err := json.Unmarshal(a.Request, &r); err != nil {
		return r, errors.New("payments: the stored request of agent action " + a.ID + ": " + err.Error())
	}
	return r, nil
}

// createPendingAction records an action waiting for approval and emits
// AGENT_ACTION.PENDING_APPROVAL with it, in tx.
func (s *Service) createPendingAction(ctx context.Context, tx store.Tx, agent *store.Agent, typ, quoteID string, spend int64, limitCurrency string, req pendingRequest) (AgentAction, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return AgentAction{}, err
	}
	now := s.now()
	a := store.AgentAction{ID: ids.New("AgentAction"), AgentID: agent.ID, CustomerID: agent.CustomerID, Type: typ,
		Status: "PENDING_APPROVAL", QuoteID: quoteID, Spend: spend, SpendCurrency: limitCurrency,
		CreatedAt: now, UpdatedAt: now, Request: body}
	if err := tx.CreateAgentAction(ctx, &a); err != nil {
		if errors.Is(err, store.ErrConflict) && quoteID != "" {
			return AgentAction{}, &Error{Code: CodeConflict, Message: "this quote already waits for the platform's approval",
				Details: map[string]any{"quoteId": quoteID}}
		}
		return AgentAction{}, err
	}
	out, err := s.agentActionJSON(ctx, tx, &a)
	if err != nil {
		return AgentAction{}, err
	}
	if err := s.emit(ctx, tx, agentActionPendingApproval, a.ID, out); err != nil {
		return AgentAction{}, err
	}
	return out, nil
}

// quoteNotPending refuses an execute of a quote in state st, as
// ExecuteQuote does.
func quoteNotPending(q *store.Quote, st string) error {
	msg := "the quote is " + st + " and cannot be executed"
	if st == "EXPIRED" {
		msg = "the quote expired at " + timestamp(q.ExpiresAt) + "; ask for a new quote"
	}
	return &Error{Code: "INVALID_STATE_TRANSITION", Message: msg, Details: map[string]any{"quoteStatus": st}}
}

// submitAgentQuote records the execute of a quote that needs approval,
// after the checks the execute would make now: the quote is PENDING and
// executable, the signature (from an embedded wallet) verifies, and the
// day's and month's limits leave room for it. Nothing is held.
func (s *Service) submitAgentQuote(ctx context.Context, agent *store.Agent, p *agentPolicy, id, signature string, spend int64, limitCurrency string, fin *then) (AgentAction, error) {
	return commit(ctx, s, "", fin, func(tx store.Tx) (AgentAction, error) {
		q, x, err := loadAgentQuote(ctx, tx, agent, p, id)
		if err != nil {
			return AgentAction{}, err
		}
		if st := quoteStatus(q, x, s.now()); st != "PENDING" {
			return AgentAction{}, quoteNotPending(q, st)
		}
		if _, _, err := executableAccounts(ctx, tx, q, "quoteId", false); err != nil {
			return AgentAction{}, err
		}
		var req pendingRequest
		if q.Payload != "" {
			if err := s.checkQuoteStamp(ctx, tx, q, signature); err != nil {
				return AgentAction{}, err
			}
			req.Signature = signature
		}
		if err := s.checkUsage(ctx, tx, agent.ID, p, spend); err != nil {
			return AgentAction{}, err
		}
		return s.createPendingAction(ctx, tx, agent, "EXECUTE_QUOTE", q.ID, spend, limitCurrency, req)
	})
}

// submitAgentTransfer records a transfer that needs approval, after the
// checks the transfer would make now (its accounts, its rail) and the
// day's and month's limits. A transfer-out from an embedded wallet is
// refused: its signature answers a one-time challenge that cannot wait.
func (s *Service) submitAgentTransfer(ctx context.Context, agent *store.Agent, p *agentPolicy, typ, why string, spend int64, limitCurrency string, req pendingRequest, fin *then) (AgentAction, error) {
	return commit(ctx, s, "", fin, func(tx store.Tx) (AgentAction, error) {
		var fe fieldErrors
		if in := req.TransferIn; in != nil {
			_, ext, err := transferEnds(ctx, tx, in.Destination.AccountID, "destination.accountId", in.Source.AccountID, "source.accountId", &fe)
			if err != nil {
				return AgentAction{}, err
			}
			if ext != nil {
				transferRail(ext, "", &fe)
			}
		}
		if out := req.TransferOut; out != nil {
			src, dst, err := transferEnds(ctx, tx, out.Source.AccountID, "source.accountId", out.Destination.AccountID, "destination.accountId", &fe)
			if err != nil {
				return AgentAction{}, err
			}
			if dst != nil {
				transferRail(dst, out.Destination.PaymentRail, &fe)
			}
			if src != nil && src.Type == "EMBEDDED_WALLET" {
				return AgentAction{}, errApprovalRequired(why, "a transfer-out from an embedded wallet cannot wait for it (its signature answers a challenge of a few minutes): pay with a quote, whose signed execute can wait, or ask the platform to change the policy")
			}
		}
		if e := fe.err(); e != nil {
			return AgentAction{}, e
		}
		if err := s.checkUsage(ctx, tx, agent.ID, p, spend); err != nil {
			return AgentAction{}, err
		}
		return s.createPendingAction(ctx, tx, agent, typ, "", spend, limitCurrency, req)
	})
}

// # The platform's operations

// AgentListFilter is the query of ListAgents, as text.
type AgentListFilter struct {
	CustomerID    string `query:"customerId"`
	IsPaused      string `query:"isPaused"`
	IsConnected   string `query:"isConnected"`
	CreatedAfter  string `query:"createdAfter"`
	CreatedBefore string `query:"createdBefore"`
	UpdatedAfter  string `query:"updatedAfter"`
	UpdatedBefore string `query:"updatedBefore"`
	Page          PageRequest
}

// boolParam reads "true" or "false" of the field name (nil when empty).
func boolParam(fe *fieldErrors, name, v string) *bool {
	switch v {
	case "":
		return nil
	case "true", "false":
		b := v == "true"
		return &b
	}
	fe.addConstraint(name, "must be true or false", wire.FieldConstraint{Enum: []string{"true", "false"}})
	return nil
}

// descending reads a sortOrder query parameter ("asc" or "desc"; empty
// means byDefault), naming a bad one in fe.
func descending(fe *fieldErrors, sortOrder string, byDefault bool) bool {
	switch sortOrder {
	case "":
		return byDefault
	case "asc", "desc":
		return sortOrder == "desc"
	}
	fe.addConstraint("sortOrder", "must be asc or desc", wire.FieldConstraint{Enum: []string{"asc", "desc"}})
	return byDefault
}

// ListAgents is a page of the platform's agents by id, deleted ones left
// out (GET /agents); every time bound is inclusive.
func (s *Service) ListAgents(ctx context.Context, req AgentListFilter) (wire.List[Agent], error) {
	var fe fieldErrors
	f := store.AgentFilter{CustomerID: req.CustomerID}
	f.Limit, f.Cursor = req.Page.check("Agent", &fe)
	if f.CustomerID != "" && !ids.Valid("Customer", f.CustomerID) {
		fe.add("customerId", "must be a Customer:<uuid> id")
	}
	f.IsPaused = boolParam(&fe, "isPaused", req.IsPaused)
	f.IsConnected = boolParam(&fe, "isConnected", req.IsConnected)
	f.CreatedAfter = dateTime(&fe, "createdAfter", req.CreatedAfter)
	f.CreatedBefore = dateTime(&fe, "createdBefore", req.CreatedBefore)
	f.UpdatedAfter = dateTime(&fe, "updatedAfter", req.UpdatedAfter)
	f.UpdatedBefore = dateTime(&fe, "updatedBefore", req.UpdatedBefore)
	if e := fe.err(); e != nil {
		return wire.List[Agent]{}, e
	}
	return listPageTx(ctx, s, func(tx store.Tx) (store.Page[store.Agent], error) { return tx.ListAgents(ctx, f) },
		func(tx store.Tx, a *store.Agent) (Agent, error) { return s.agentNow(ctx, tx, a) })
}

// DeleteAgent deletes an agent (DELETE /agents/{agentId}): its token stops
// working at once, its unredeemed device codes end, and its actions
// waiting for approval become REJECTED ("the agent was deleted"). The
// agent is kept for the actions, quotes and transactions that name it, but
// every operation answers 404 for it from now on.
func (s *Service) DeleteAgent(ctx context.Context, id string) error {
	_, err := commit(ctx, s, "", nil, func(tx store.Tx) (struct{}, error) {
		a, err := loadAgent(ctx, tx, id)
		if err != nil {
			return struct{}{}, err
		}
		now := s.now()
		won, err := tx.DeleteAgent(ctx, a.ID, now)
		if err != nil {
			return struct{}{}, err
		}
		if !won {
			return struct{}{}, errorf(CodeNotFound, "no agent with this id")
		}
		for {
			page, err := tx.ListAgentApprovals(ctx, store.AgentApprovalFilter{AgentID: a.ID, Limit: 100})
			if err != nil {
				return struct{}{}, err
			}
			for i := range page.Items {
				next := page.Items[i]
				next.Status, next.RejectionReason, next.UpdatedAt = "REJECTED", "the agent was deleted", now
				if _, err := tx.DecideAgentAction(ctx, &next, "PENDING_APPROVAL"); err != nil {
					return struct{}{}, err
				}
			}
			if !page.HasMore {
				return struct{}{}, nil
			}
		}
	})
	return err
}

// UpdateAgentPolicy changes an agent's policy (PATCH
// /agents/{agentId}/policy) with the members body gives: permissions,
// defaultExecutionMode, accountRestrictions and approvalThresholds replace
// the agent's (null removes the last two); spendingLimits changes the
// limits it names (dailyLimit, dailyTransactionLimit and monthlyLimit
// null remove them). A new spendingLimits.currency recasts the amounts the
// request does not restate into it at the exchange rate now (rounded up;
// 400 naming spendingLimits.currency when there is none). The result is
// checked as CreateAgent checks a policy, every bad member named (without
// the policy. prefix); the change applies to every later request of the
// agent and to every approval from now on.
func (s *Service) UpdateAgentPolicy(ctx context.Context, id string, body json.RawMessage) (Agent, error) {
	var fe fieldErrors
	var upd agentPolicy
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil || members == nil {
		return Agent{}, errorf(CodeInvalidRequestFormat, "the body must be a JSON object (AgentPolicyUpdateRequest)")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&upd); err != nil {
		for _, p := range strictjson.Problems(body, &upd, "") {
			fe.add(p.Field, p.Message)
		}
		if e := fe.err(); e != nil {
			return Agent{}, e
		}
		return Agent{}, errorf(CodeInvalidRequestFormat, "the body must be an AgentPolicyUpdateRequest object")
	}
	var limits map[string]json.RawMessage
	if raw, ok := members["spendingLimits"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &limits); err != nil {
			return Agent{}, invalidField("spendingLimits", "must be an object")
		}
	}
	return commit(ctx, s, "", nil, func(tx store.Tx) (Agent, error) {
		fe := fe
		a, err := loadAgent(ctx, tx, id)
		if err != nil {
			return Agent{}, err
		}
		p, err := policyOf(a)
		if err != nil {
			return Agent{}, err
		}
		if _, ok := members["permissions"]; ok {
			p.Permissions = upd.Permissions
		}
		if _, ok := members["defaultExecutionMode"]; ok {
			p.DefaultExecutionMode = upd.DefaultExecutionMode
		}
		if _, ok := members["accountRestrictions"]; ok {
			p.AccountRestrictions = upd.AccountRestrictions
		}
		if _, ok := members["approvalThresholds"]; ok {
			p.ApprovalThresholds = upd.ApprovalThresholds
		}
		if raw, ok := members["spendingLimits"]; ok {
			switch {
			case isNull(raw):
				fe.add("spendingLimits", "cannot be removed: a policy has spending limits")
			case p.SpendingLimits == nil:
				p.SpendingLimits = upd.SpendingLimits
			default:
				sl, in := p.SpendingLimits, upd.SpendingLimits
				amounts := map[string]**int64{"perTransactionLimit": &sl.PerTransactionLimit, "dailyLimit": &sl.DailyLimit,
					"dailyTransactionLimit": &sl.DailyTransactionLimit, "monthlyLimit": &sl.MonthlyLimit}
				given := map[string]*int64{"perTransactionLimit": in.PerTransactionLimit, "dailyLimit": in.DailyLimit,
					"dailyTransactionLimit": in.DailyTransactionLimit, "monthlyLimit": in.MonthlyLimit}
				if _, ok := limits["currency"]; ok && in.Currency != sl.Currency && currencyCode(in.Currency) {
					// Recast the amounts this request does not restate;
					// the transaction count is no amount.
					for _, name := range []string{"perTransactionLimit", "dailyLimit", "monthlyLimit"} {
						if _, restated := limits[name]; restated || *amounts[name] == nil {
							continue
						}
						v, err := s.spendIn(in.Currency, sl.Currency, **amounts[name])
						if err != nil {
							fe.add("spendingLimits.currency", "the service has no exchange rate from "+sl.Currency+" to recast the limits in "+in.Currency+": restate them in this request")
							break
						}
						*amounts[name] = &v
					}
				}
				if _, ok := limits["currency"]; ok {
					sl.Currency = in.Currency
				}
				for name, v := range given {
					if _, ok := limits[name]; ok {
						*amounts[name] = v
					}
				}
			}
		}
		p.validate(&fe, "")
		if e := fe.err(); e != nil {
			return Agent{}, e
		}
		policy, err := json.Marshal(p)
		if err != nil {
			return Agent{}, err
		}
		if err := tx.UpdateAgentPolicy(ctx, a.ID, policy, s.now()); err != nil {
			return Agent{}, err
		}
		if a, err = tx.GetAgent(ctx, a.ID); err != nil {
			return Agent{}, err
		}
		return s.agentNow(ctx, tx, a)
	})
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// AgentApprovalFilter is the query of AgentApprovals, as text.
type AgentApprovalFilter struct {
	AgentID    string `query:"agentId"`
	CustomerID string `query:"customerId"`
	StartDate  string `query:"startDate"`
	EndDate    string `query:"endDate"`
	SortOrder  string `query:"sortOrder"`
	Page       PageRequest
}

// AgentApprovals is a page of the actions waiting for the platform's
// approval, newest first unless sortOrder is asc (GET /agents/approvals);
// startDate and endDate bound createdAt, both inclusive.
func (s *Service) AgentApprovals(ctx context.Context, req AgentApprovalFilter) (wire.List[AgentAction], error) {
	var fe fieldErrors
	f := store.AgentApprovalFilter{AgentID: req.AgentID, CustomerID: req.CustomerID, Descending: true}
	f.Limit, f.Cursor = req.Page.check("AgentAction", &fe)
	if f.AgentID != "" && !ids.Valid("Agent", f.AgentID) {
		fe.add("agentId", "must be an Agent:<uuid> id")
	}
	if f.CustomerID != "" && !ids.Valid("Customer", f.CustomerID) {
		fe.add("customerId", "must be a Customer:<uuid> id")
	}
	f.CreatedAfter = dateTime(&fe, "startDate", req.StartDate)
	f.CreatedBefore = dateTime(&fe, "endDate", req.EndDate)
	f.Descending = descending(&fe, req.SortOrder, true)
	if e := fe.err(); e != nil {
		return wire.List[AgentAction]{}, e
	}
	return listPageTx(ctx, s, func(tx store.Tx) (store.Page[store.AgentAction], error) { return tx.ListAgentApprovals(ctx, f) },
		func(tx store.Tx, a *store.AgentAction) (AgentAction, error) { return s.agentActionJSON(ctx, tx, a) })
}

// loadDecidable is an action of the agent that the platform can decide:
// 404 NOT_FOUND for an unknown agent or an action that is not the agent's,
// 409 CONFLICT for one that is no longer PENDING_APPROVAL.
func loadDecidable(ctx context.Context, tx store.Tx, agentID, actionID string) (*store.Agent, *store.AgentAction, error) {
	agent, err := loadAgent(ctx, tx, agentID)
	if err != nil {
		return nil, nil, err
	}
	notFound := errorf(CodeNotFound, "the agent has no action with this id")
	if !ids.Valid("AgentAction", actionID) {
		return nil, nil, notFound
	}
	a, err := tx.GetAgentAction(ctx, actionID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && a.AgentID != agent.ID) {
		return nil, nil, notFound
	}
	if err != nil {
		return nil, nil, err
	}
	if a.Status != "PENDING_APPROVAL" {
		return nil, nil, errNotPending(a.Status)
	}
	return agent, a, nil
}

func errNotPending(status string) error {
	return &Error{Code: CodeConflict, Message: "the action is " + status + ", not PENDING_APPROVAL: it was already decided",
		Details: map[string]any{"status": status}}
}

// errAgentPaused refuses the approval of a paused agent's action.
var errAgentPaused = &Error{Code: CodeConflict,
	Message: "the agent is paused: its actions wait until it is resumed (PATCH /agents/{agentId} {\"isPaused\": false}), or can be rejected",
	Details: map[string]any{"reason": "AGENT_PAUSED"}}

// errDecided ends an approval whose action another request decided first;
// it rolls the operation back and is answered as errNotPending.
type errDecided struct{ status string }

func (e errDecided) Error() string { return "payments: agent action already " + e.status }

// ApproveAgentAction approves an action waiting for approval (POST
// /agents/{agentId}/actions/{actionId}/approve) and runs it: see the
// comment at the top of this file. The answer is the action, APPROVED with
// its transaction, or FAILED with failureReason when the operation refused.
// A paused agent's actions wait: approving one is 409 CONFLICT (reason
// AGENT_PAUSED) until the agent is resumed; rejecting it works.
//
// It runs under o's Idempotency-Key: the answer is recorded in the
// operation's commit, or in the FAILED action's.
func (s *Service) ApproveAgentAction(ctx context.Context, o Once, agentID, actionID string) (Answer, error) {
	return once(ctx, s, o, func(fin *then) (AgentAction, error) { return s.approveAgentAction(ctx, agentID, actionID, fin) })
}

func (s *Service) approveAgentAction(ctx context.Context, agentID, actionID string, fin *then) (AgentAction, error) {
	agent, a, err := read2(ctx, s, func(tx store.Tx) (*store.Agent, *store.AgentAction, error) {
		return loadDecidable(ctx, tx, agentID, actionID)
	})
	if err != nil {
		return AgentAction{}, err
	}
	if agent.IsPaused {
		return AgentAction{}, errAgentPaused
	}
	req, err := pendingOf(a)
	if err != nil {
		return AgentAction{}, err
	}
	var out AgentAction
	approve := andThen(fin, func(ctx context.Context, tx store.Tx, result any) (any, error) {
		var err error
		out, err = s.approveIn(ctx, tx, a.ID, result)
		return out, err
	})
	switch a.Type {
	case "EXECUTE_QUOTE":
		_, err = s.executeQuote(ctx, a.QuoteID, req.Signature, false, approve)
	case "TRANSFER_IN":
		if req.TransferIn == nil {
			return AgentAction{}, errors.New("payments: agent action " + a.ID + " keeps no transfer-in")
		}
		_, err = s.transferIn(ctx, *req.TransferIn, approve)
	case "TRANSFER_OUT":
		if req.TransferOut == nil {
			return AgentAction{}, errors.New("payments: agent action " + a.ID + " keeps no transfer-out")
		}
		var signed Signed[wire.Transaction]
		signed, err = s.transferOut(ctx, *req.TransferOut, SignedCall{}, approve)
		if err == nil && signed.Challenge != nil {
			err = errorf(CodeSignatureMissing, "the transfer-out now needs the wallet's signature")
		}
	default:
		return AgentAction{}, errors.New("payments: agent action " + a.ID + " of unknown type " + a.Type)
	}
	var decided errDecided
	var refused *Error
	switch {
	case err == nil:
		return out, nil
	case errors.As(err, &decided) && decided.status == "paused":
		return AgentAction{}, errAgentPaused
	case errors.As(err, &decided):
		return AgentAction{}, errNotPending(decided.status)
	case errors.As(err, &refused):
		return s.failAgentAction(ctx, agent.ID, a.ID, refused, fin)
	}
	return AgentAction{}, err
}

// approveIn is the approval's part of the operation's transaction, given
// the operation's result: the limits of the policy as it is now, then the
// action's compare-and-set from PENDING_APPROVAL to APPROVED with its
// transaction.
func (s *Service) approveIn(ctx context.Context, tx store.Tx, actionID string, result any) (AgentAction, error) {
	a, err := tx.GetAgentAction(ctx, actionID)
	if err != nil {
		return AgentAction{}, err
	}
	if a.Status != "PENDING_APPROVAL" {
		return AgentAction{}, errDecided{a.Status}
	}
	agent, err := tx.GetAgent(ctx, a.AgentID)
	if errors.Is(err, store.ErrNotFound) {
		return AgentAction{}, errDecided{"REJECTED"} // deleting an agent rejects its waiting actions
	}
	if err != nil {
		return AgentAction{}, err
	}
	if agent.IsPaused {
		// Paused since the approval began: the action waits.
		return AgentAction{}, errDecided{"paused"}
	}
	p, err := policyOf(agent)
	if err != nil {
		return AgentAction{}, err
	}
	var source, currency, transactionID string
	var amount int64
	switch r := result.(type) {
	case wire.Quote:
		q, err := tx.GetQuote(ctx, a.QuoteID)
		if err != nil {
			return AgentAction{}, err
		}
		source, currency, amount, transactionID = q.SourceAccountID, q.SendingCurrency, q.TotalSendingAmount, r.TransactionID
	case wire.Transaction:
		source, currency, amount, transactionID = r.Source.AccountID, r.ReceivedAmount.Currency.Code, r.ReceivedAmount.Amount, r.ID
	default:
		return AgentAction{}, errors.New("payments: approval of an unknown result")
	}
	spend, limitCurrency, err := s.agentSpend(&p, currency, amount)
	if err != nil {
		return AgentAction{}, err
	}
	if err := p.checkPerTransaction(source, spend); err != nil {
		return AgentAction{}, err
	}
	if err := s.checkUsage(ctx, tx, agent.ID, &p, spend); err != nil {
		return AgentAction{}, err
	}
	now := s.now()
	next := *a
	next.Status, next.TransactionID, next.Spend, next.SpendCurrency = "APPROVED", transactionID, spend, limitCurrency
	next.ExecutedAt, next.UpdatedAt = now, now
	won, err := tx.DecideAgentAction(ctx, &next, "PENDING_APPROVAL")
	if err != nil {
		return AgentAction{}, err
	}
	if !won {
		return AgentAction{}, errDecided{"decided"}
	}
	return s.agentActionJSON(ctx, tx, &next)
}

// failAgentAction records that the approved operation of an action
// refused (the operation's transaction rolled back): FAILED, with why. It
// is the approval's one commit, and runs fin.
func (s *Service) failAgentAction(ctx context.Context, agentID, actionID string, why *Error, fin *then) (AgentAction, error) {
	return commit(ctx, s, "", fin, func(tx store.Tx) (AgentAction, error) {
		_, a, err := loadDecidable(ctx, tx, agentID, actionID)
		if err != nil {
			return AgentAction{}, err
		}
		now := s.now()
		next := *a
		next.Status, next.FailureReason, next.UpdatedAt = "FAILED", why.Code+": "+why.Message, now
		won, err := tx.DecideAgentAction(ctx, &next, "PENDING_APPROVAL")
		if err != nil {
			return AgentAction{}, err
		}
		if !won {
			return AgentAction{}, errNotPending("decided")
		}
		return s.agentActionJSON(ctx, tx, &next)
	})
}

// AgentActionRejection is the optional body of RejectAgentAction.
type AgentActionRejection struct {
	Reason string `json:"reason"`
}

// RejectAgentAction rejects an action waiting for approval (POST
// /agents/{agentId}/actions/{actionId}/reject): it becomes REJECTED, with
// the platform's reason (at most 500 characters of text) as
// rejectionReason, and nothing runs.
func (s *Service) RejectAgentAction(ctx context.Context, agentID, actionID string, req AgentActionRejection) (AgentAction, error) {
	reason := strings.TrimSpace(req.Reason)
	if utf8.RuneCountInString(reason) > 500 || !plainText(reason) {
		return AgentAction{}, invalidField("reason", "must be at most 500 characters of text without control characters")
	}
	return commit(ctx, s, "", nil, func(tx store.Tx) (AgentAction, error) {
		_, a, err := loadDecidable(ctx, tx, agentID, actionID)
		if err != nil {
			return AgentAction{}, err
		}
		next := *a
		next.Status, next.RejectionReason, next.UpdatedAt = "REJECTED", reason, s.now()
		won, err := tx.DecideAgentAction(ctx, &next, "PENDING_APPROVAL")
		if err != nil {
			return AgentAction{}, err
		}
		if !won {
			return AgentAction{}, errNotPending("decided")
		}
		return s.agentActionJSON(ctx, tx, &next)
	})
}
