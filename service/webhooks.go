package service

import (
	"net/http"

	"paywallet/service/payments"
)

func (s *Service) webhookRoutes() []route {
	return []route{
		{"GET", "/config", s.getConfig, authPlatform},
		{"PATCH", "/config", s.updateConfig, authPlatform},
		{"POST", "/sandbox/webhooks/test", s.testWebhook, authSandbox},
		{"GET", "/webhooks/jwks.json", s.webhookJWKS, authNone},
		{"GET", "/webhooks/deliveries", s.listDeliveries, authPlatform},
		{"POST", "/webhooks/deliveries/{id}/replay", s.replayDelivery, authPlatform},
	}
}

func (s *Service) getConfig(w http.ResponseWriter, r *http.Request) error {
	out, err := s.ops.GetConfig(r.Context())
	return reply(w, http.StatusOK, out, err)
}

// updateConfig decodes the body as its members: the operation names each
// field it refuses.
func (s *Service) updateConfig(w http.ResponseWriter, r *http.Request) error {
	var req payments.PlatformConfigUpdate
	if _, err := decodeBody(r, &req, false); err != nil {
		return err
	}
	out, err := s.ops.UpdateConfig(r.Context(), req)
	return reply(w, http.StatusOK, out, err)
}

// testWebhook takes no body, or an empty JSON object.
func (s *Service) testWebhook(w http.ResponseWriter, r *http.Request) error {
	if err := readEmptyBody(r); err != nil {
		return err
	}
	out, err := s.ops.TestWebhook(r.Context())
	return reply(w, http.StatusOK, out, err)
}

// webhookJWKS answers the public keys, without credentials, cacheable for
// five minutes.
func (s *Service) webhookJWKS(w http.ResponseWriter, r *http.Request) error {
	b, err := s.ops.WebhookKeys().Marshal()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(append(b, '\n'))
	return nil
}

func (s *Service) listDeliveries(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	out, err := s.ops.ListWebhookDeliveries(r.Context(), payments.WebhookDeliveryFilter{Status: q.Get("status"),
		ResourceID: q.Get("resourceId"), Page: page(r)})
	return reply(w, http.StatusOK, out, err)
}

// replayDelivery takes no body, or an empty JSON object.
func (s *Service) replayDelivery(w http.ResponseWriter, r *http.Request) error {
	if err := readEmptyBody(r); err != nil {
		return err
	}
	out, err := s.ops.ReplayWebhookDelivery(r.Context(), r.PathValue("id"))
	return reply(w, http.StatusOK, out, err)
}
