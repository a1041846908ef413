package service

import (
	"net/http"

	"paywallet/service/payments"

	"paywallet/shared/wire"
)

func (s *Service) credentialRoutes() []route {
	return []route{
		{"GET", "/auth/credentials", s.listCredentials, authPlatform},
		{"POST", "/auth/credentials", s.createCredential, authPlatform},
		{"DELETE", "/auth/credentials/{id}", s.deleteCredential, authPlatform},
		{"POST", "/auth/credentials/{id}/challenge", s.challengeCredential, authPlatform},
		{"POST", "/auth/credentials/{id}/verify", s.verifyCredential, authPlatform},
	}
}

func (s *Service) listCredentials(w http.ResponseWriter, r *http.Request) error {
	out, err := s.ops.ListCredentials(r.Context(), payments.AccountQuery{AccountID: r.URL.Query().Get("accountId")})
	return reply(w, http.StatusOK, out, err)
}

func (s *Service) createCredential(w http.ResponseWriter, r *http.Request) error {
	var req wire.CredentialCreateRequest
	call, err := signedBody(r, &req)
	if err != nil {
		return err
	}
	out, err := s.ops.CreateCredential(r.Context(), req, call)
	return replySigned(w, http.StatusCreated, out, err)
}

func (s *Service) deleteCredential(w http.ResponseWriter, r *http.Request) error {
	call, err := signedNoBody(r)
	if err != nil {
		return err
	}
	out, err := s.ops.DeleteCredential(r.Context(), r.PathValue("id"), call)
	return replySigned(w, http.StatusNoContent, out, err)
}

// challengeCredential answers the EMAIL_OTP credential with its target
// bundle, or the PASSKEY login challenge.
func (s *Service) challengeCredential(w http.ResponseWriter, r *http.Request) error {
	var req wire.ChallengeRequest
	if _, err := decodeBody(r, &req, true); err != nil {
		return err
	}
	out, err := s.ops.ChallengeCredential(r.Context(), r.PathValue("id"), req)
	if err == nil && out.Passkey != nil {
		return reply(w, http.StatusOK, out.Passkey, nil)
	}
	return reply(w, http.StatusOK, out.AuthMethod, err)
}

// verifyCredential checks the body before the signed-retry headers, and
// leaves the pairing of those headers to the operation: only EMAIL_OTP is
// a signed retry (PASSKEY sends Request-Id alone, OAUTH neither), see
// payments.Service.VerifyCredential.
func (s *Service) verifyCredential(w http.ResponseWriter, r *http.Request) error {
	var req wire.VerifyRequest
	body, err := decodeBody(r, &req, false)
	if err != nil {
		return err
	}
	out, err := s.ops.VerifyCredential(r.Context(), r.PathValue("id"), req, retryHeaders(r, body))
	return replySigned(w, http.StatusOK, out, err)
}
