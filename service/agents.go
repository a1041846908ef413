package service

import (
	"net/http"

	"paywallet/service/payments"
)

func (s *Service) agentRoutes() []route {
	return []route{
		{"POST", "/agents", s.createAgent, authPlatform},
		{"GET", "/agents/{agentId}", s.getAgent, authPlatform},
		{"PATCH", "/agents/{agentId}", s.updateAgent, authPlatform},
		{"POST", "/agents/{agentId}/device-codes", s.createDeviceCode, authPlatform},
		{"GET", "/agents/device-codes/{code}/status", s.deviceCodeStatus, authPlatform},
		{"POST", "/agents/device-codes/{code}/redeem", s.redeemDeviceCode, authNone},
		{"GET", "/agents/me/external-accounts/{externalAccountId}", s.agentExternalAccount, authAgent},
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
