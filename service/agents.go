package service

import (
	"encoding/json"
	"net/http"
	"strings"

	"paywallet/service/payments"
	"paywallet/shared/wire"
)

func (s *Service) agentRoutes() []route {
	return []route{
		{"POST", "/agents", s.createAgent, authPlatform},
		{"GET", "/agents", s.listAgents, authPlatform},
		{"DELETE", "/agents/{agentId}", s.deleteAgent, authPlatform},
		{"PATCH", "/agents/{agentId}/policy", s.updateAgentPolicy, authPlatform},
		{"GET", "/agents/approvals", s.agentApprovals, authPlatform},
		{"POST", "/agents/{agentId}/actions/{actionId}/approve", s.approveAgentAction, authPlatform},
		{"POST", "/agents/{agentId}/actions/{actionId}/reject", s.rejectAgentAction, authPlatform},
		{"GET", "/agents/{agentId}", s.getAgent, authPlatform},
		{"PATCH", "/agents/{agentId}", s.updateAgent, authPlatform},
		{"POST", "/agents/{agentId}/device-codes", s.createDeviceCode, authPlatform},
		{"GET", "/agents/device-codes/{code}/status", s.deviceCodeStatus, authPlatform},
		{"POST", "/agents/device-codes/{code}/redeem", s.redeemDeviceCode, authNone},
		{"GET", "/agents/me", s.agentMe, authAgent},
		{"GET", "/agents/me/internal-accounts", s.agentInternalAccounts, authAgent},
		{"GET", "/agents/me/external-accounts", s.agentExternalAccounts, authAgent},
		{"POST", "/agents/me/external-accounts", s.agentCreateExternalAccount, authAgent},
		{"GET", "/agents/me/external-accounts/{externalAccountId}", s.agentExternalAccount, authAgent},
		{"DELETE", "/agents/me/external-accounts/{externalAccountId}", s.agentDeleteExternalAccount, authAgent},
		{"GET", "/agents/me/transactions", s.agentTransactions, authAgent},
		{"GET", "/agents/me/transactions/{transactionId}", s.agentTransaction, authAgent},
		{"POST", "/agents/me/quotes", s.agentCreateQuote, authAgent},
		{"GET", "/agents/me/quotes/{quoteId}", s.agentGetQuote, authAgent},
		{"POST", "/agents/me/quotes/{quoteId}/execute", s.agentExecuteQuote, authAgent},
		{"GET", "/agents/me/actions", s.agentActions, authAgent},
		{"GET", "/agents/me/actions/{actionId}", s.agentGetAction, authAgent},
		{"POST", "/agents/me/transfer-in", s.agentTransferIn, authAgent},
		{"POST", "/agents/me/transfer-out", s.agentTransferOut, authAgent},
	}
}

func (s *Service) createAgent(w http.ResponseWriter, r *http.Request) error {
	var req payments.AgentRequest
	if _, err := decodeBody(r, &req, false); err != nil {
		return err
	}
	a, err := s.ops.CreateAgent(r.Context(), req)
	return reply(w, http.StatusCreated, a, err)
}

func (s *Service) getAgent(w http.ResponseWriter, r *http.Request) error {
	a, err := s.ops.GetAgent(r.Context(), r.PathValue("agentId"))
	return reply(w, http.StatusOK, a, err)
}

func (s *Service) updateAgent(w http.ResponseWriter, r *http.Request) error {
	var req payments.AgentUpdate
	if _, err := decodeBody(r, &req, false); err != nil {
		return err
	}
	a, err := s.ops.UpdateAgent(r.Context(), r.PathValue("agentId"), req)
	return reply(w, http.StatusOK, a, err)
}

// createDeviceCode does not read the body.
func (s *Service) createDeviceCode(w http.ResponseWriter, r *http.Request) error {
	d, err := s.ops.CreateDeviceCode(r.Context(), r.PathValue("agentId"))
	return reply(w, http.StatusCreated, d, err)
}

func (s *Service) deviceCodeStatus(w http.ResponseWriter, r *http.Request) error {
	st, err := s.ops.DeviceCodeStatus(r.Context(), r.PathValue("code"))
	return reply(w, http.StatusOK, st, err)
}

// redeemDeviceCode needs no credential (the code is the proof) and does not
// read the body.
func (s *Service) redeemDeviceCode(w http.ResponseWriter, r *http.Request) error {
	a, err := s.ops.RedeemDeviceCode(r.Context(), r.PathValue("code"))
	return reply(w, http.StatusOK, a, err)
}

func (s *Service) agentExternalAccount(w http.ResponseWriter, r *http.Request) error {
	a, err := s.ops.AgentExternalAccount(r.Context(), agentOf(r), r.PathValue("externalAccountId"))
	return reply(w, http.StatusOK, a, err)
}

func (s *Service) agentMe(w http.ResponseWriter, r *http.Request) error {
	a, err := s.ops.GetAgentMe(r.Context(), agentOf(r))
	return reply(w, http.StatusOK, a, err)
}

func (s *Service) agentInternalAccounts(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	out, err := s.ops.AgentInternalAccounts(r.Context(), agentOf(r), payments.AgentInternalAccountFilter{
		Type: q.Get("type"), Currency: q.Get("currency"), Page: page(r)})
	return reply(w, http.StatusOK, out, err)
}

func (s *Service) agentExternalAccounts(w http.ResponseWriter, r *http.Request) error {
	out, err := s.ops.AgentExternalAccounts(r.Context(), agentOf(r), payments.AgentExternalAccountFilter{
		Currency: r.URL.Query().Get("currency"), Page: page(r)})
	return reply(w, http.StatusOK, out, err)
}

// agentCreateExternalAccount takes any JSON object: the operation names
// what is wrong in it.
func (s *Service) agentCreateExternalAccount(w http.ResponseWriter, r *http.Request) error {
	var body map[string]any
	if _, err := decodeBody(r, &body, false); err != nil {
		return err
	}
	a, err := s.ops.AgentCreateExternalAccount(r.Context(), agentOf(r), body)
	return reply(w, http.StatusCreated, a, err)
}

func (s *Service) agentTransactions(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	out, err := s.ops.AgentTransactions(r.Context(), agentOf(r), payments.AgentTransactionFilter{
		CustomerID: q.Get("customerId"), AccountIdentifier: q.Get("accountIdentifier"),
		SenderAccountIdentifier: q.Get("senderAccountIdentifier"), ReceiverAccountIdentifier: q.Get("receiverAccountIdentifier"),
		Reference: q.Get("reference"), Status: q.Get("status"), Type: q.Get("type"), StartDate: q.Get("startDate"),
		EndDate: q.Get("endDate"), SortOrder: q.Get("sortOrder"), Page: page(r)})
	return reply(w, http.StatusOK, out, err)
}

func (s *Service) agentTransaction(w http.ResponseWriter, r *http.Request) error {
	out, err := s.ops.AgentTransaction(r.Context(), agentOf(r), r.PathValue("transactionId"))
	return reply(w, http.StatusOK, out, err)
}

// agentCreateQuote takes an Idempotency-Key, scoped to the agent.
func (s *Service) agentCreateQuote(w http.ResponseWriter, r *http.Request) error {
	var req payments.QuoteRequest
	body, err := decodeBody(r, &req, false)
	if err != nil {
		return err
	}
	agent := agentOf(r)
	return s.once(w, r, "agents.quotes.create "+agent.ID, body, http.StatusCreated, func(o payments.Once) (payments.Answer, error) {
		return s.ops.AgentCreateQuote(r.Context(), o, agent, req)
	})
}

func (s *Service) agentGetQuote(w http.ResponseWriter, r *http.Request) error {
	q, err := s.ops.AgentGetQuote(r.Context(), agentOf(r), r.PathValue("quoteId"))
	return reply(w, http.StatusOK, q, err)
}

// agentExecuteQuote takes an optional empty body (as executeQuote), the
// wallet's Service-Wallet-Signature for an embedded-wallet source, and an
// Idempotency-Key; it answers the AgentAction.
func (s *Service) agentExecuteQuote(w http.ResponseWriter, r *http.Request) error {
	var none struct{}
	body, err := decodeBody(r, &none, true)
	if err != nil {
		return err
	}
	agent := agentOf(r)
	id := r.PathValue("quoteId")
	stamp := strings.TrimSpace(r.Header.Get(wire.HeaderWalletSignature))
	return s.once(w, r, "agents.quotes.execute "+agent.ID+" "+id, body, http.StatusOK, func(o payments.Once) (payments.Answer, error) {
		return s.ops.AgentExecuteQuote(r.Context(), o, agent, id, payments.Stamp(stamp))
	})
}

func (s *Service) agentActions(w http.ResponseWriter, r *http.Request) error {
	out, err := s.ops.AgentActions(r.Context(), agentOf(r), payments.AgentActionFilter{
		Status: r.URL.Query().Get("status"), Page: page(r)})
	return reply(w, http.StatusOK, out, err)
}

func (s *Service) agentGetAction(w http.ResponseWriter, r *http.Request) error {
	a, err := s.ops.AgentGetAction(r.Context(), agentOf(r), r.PathValue("actionId"))
	return reply(w, http.StatusOK, a, err)
}

// agentDeleteExternalAccount does not read the body, and answers 204.
func (s *Service) agentDeleteExternalAccount(w http.ResponseWriter, r *http.Request) error {
	if err := s.ops.AgentDeleteExternalAccount(r.Context(), agentOf(r), r.PathValue("externalAccountId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// agentTransferIn takes an Idempotency-Key, scoped to the agent, and
// answers the AgentAction.
func (s *Service) agentTransferIn(w http.ResponseWriter, r *http.Request) error {
	var req payments.TransferInRequest
	body, err := decodeBody(r, &req, false)
	if err != nil {
		return err
	}
	agent := agentOf(r)
	return s.once(w, r, "agents.transfers.in "+agent.ID, body, http.StatusCreated, func(o payments.Once) (payments.Answer, error) {
		return s.ops.AgentTransferIn(r.Context(), o, agent, req)
	})
}

// agentTransferOut is transferOut for the agent: from an embedded wallet
// the first call answers 202 with the challenge (never recorded under the
// Idempotency-Key) and the signed retry makes the transfer; it answers the
// AgentAction.
func (s *Service) agentTransferOut(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	call, err := signedCall(r, body)
	if err != nil {
		return err
	}
	var req payments.TransferOutRequest
	if err := decodeJSON(r, body, &req, false); err != nil {
		return err
	}
	agent := agentOf(r)
	return s.once(w, r, "agents.transfers.out "+agent.ID, body, http.StatusCreated, func(o payments.Once) (payments.Answer, error) {
		return s.ops.AgentTransferOut(r.Context(), o, agent, req, call)
	})
}

func (s *Service) listAgents(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	out, err := s.ops.ListAgents(r.Context(), payments.AgentListFilter{CustomerID: q.Get("customerId"),
		IsPaused: q.Get("isPaused"), IsConnected: q.Get("isConnected"),
		CreatedAfter: q.Get("createdAfter"), CreatedBefore: q.Get("createdBefore"),
		UpdatedAfter: q.Get("updatedAfter"), UpdatedBefore: q.Get("updatedBefore"), Page: page(r)})
	return reply(w, http.StatusOK, out, err)
}

// deleteAgent does not read the body, and answers 204.
func (s *Service) deleteAgent(w http.ResponseWriter, r *http.Request) error {
	if err := s.ops.DeleteAgent(r.Context(), r.PathValue("agentId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// updateAgentPolicy takes a JSON object; the operation decodes it itself
// (to tell a member set to null from one left out) and names every
// unknown member, wrong type and bad value.
func (s *Service) updateAgentPolicy(w http.ResponseWriter, r *http.Request) error {
	var members map[string]json.RawMessage
	body, err := decodeBody(r, &members, false)
	if err != nil {
		return err
	}
	a, err := s.ops.UpdateAgentPolicy(r.Context(), r.PathValue("agentId"), body)
	return reply(w, http.StatusOK, a, err)
}

func (s *Service) agentApprovals(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	out, err := s.ops.AgentApprovals(r.Context(), payments.AgentApprovalFilter{AgentID: q.Get("agentId"),
		CustomerID: q.Get("customerId"), StartDate: q.Get("startDate"), EndDate: q.Get("endDate"),
		SortOrder: q.Get("sortOrder"), Page: page(r)})
	return reply(w, http.StatusOK, out, err)
}

// approveAgentAction takes an optional empty body and an Idempotency-Key
// (the approval moves money), scoped to the action.
func (s *Service) approveAgentAction(w http.ResponseWriter, r *http.Request) error {
	var none struct{}
	body, err := decodeBody(r, &none, true)
	if err != nil {
		return err
	}
	agentID, actionID := r.PathValue("agentId"), r.PathValue("actionId")
	return s.once(w, r, "agents.actions.approve "+agentID+" "+actionID, body, http.StatusOK, func(o payments.Once) (payments.Answer, error) {
		return s.ops.ApproveAgentAction(r.Context(), o, agentID, actionID)
	})
}

// rejectAgentAction takes an optional body ({"reason": …}).
func (s *Service) rejectAgentAction(w http.ResponseWriter, r *http.Request) error {
	var req payments.AgentActionRejection
	if _, err := decodeBody(r, &req, true); err != nil {
		return err
	}
	a, err := s.ops.RejectAgentAction(r.Context(), r.PathValue("agentId"), r.PathValue("actionId"), req)
	return reply(w, http.StatusOK, a, err)
}
