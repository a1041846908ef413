package bff

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"paywallet/shared/webhooksig"
)

// WebhookPath is where the service delivers its webhooks to the BFF.
const WebhookPath = "/webhooks/service"

var (
	errWebhookSignature = &Error{Status: http.StatusUnauthorized, Code: codeUnauthorized,
		Message: "webhook signature missing, malformed, stale or not the service's"}
	errWebhookMalformed = &Error{Status: http.StatusBadRequest, Code: codeInvalidRequestFormat,
		Message: "webhook body is not a webhook envelope"}
	errWebhookUnavailable = &Error{Status: http.StatusServiceUnavailable, Code: codeServiceUnavailable,
		Message: "the webhook could not be recorded; deliver it again later"}
)

// webhookType is an OBJECT.EVENT type such as OUTGOING_PAYMENT.COMPLETED,
// or TEST: safe as an SSE event name.
var webhookType = regexp.MustCompile(`^[A-Z][A-Z_]{0,63}(\.[A-Z][A-Z_]{0,63})?$`)

// handleWebhook receives one webhook of the service: POST /webhooks/service,
// outside /api (the service has no cookie and sends no X-CSRF). The
// replay-safe signature (Service-Webhook-Signature, checked with
// paywallet/shared/webhooksig) must be the service's (its JWKS), over this
// webhook's id, a time within five minutes of now, and the body; otherwise
// 401. A webhook whose id was recorded before is answered 200 (it was
// delivered) and not passed on again. A new one is passed on to the
// browsers of its customer, on every instance.
func (s *Server) handleWebhook(c *fiber.Ctx) error {
	result, err := s.receiveWebhook(c)
	s.obs.webhooks.WithLabelValues(result).Inc()
	return err
}

// receiveWebhook is handleWebhook, with the result it is counted under
// (bff_webhooks_received_total).
func (s *Server) receiveWebhook(c *fiber.Ctx) (result string, _ error) {
	body := append([]byte(nil), c.Body()...)
	header := c.Get(webhooksig.Header)
	sig, err := webhooksig.ParseHeader(header)
	if err != nil {
		return webhookRejected, errWebhookSignature
	}
	// The time first: a stale delivery costs no key lookup.
	if d := s.now().Sub(time.Unix(sig.Timestamp, 0)); d > webhooksig.Tolerance || d < -webhooksig.Tolerance {
		return webhookRejected, errWebhookSignature
	}
	ctx, cancel := context.WithTimeout(s.base, 15*time.Second)
	defer cancel()
	ctx = carry(c.UserContext(), ctx) // the request's id and span
	keys, err := s.jwks.keySet(ctx, sig.KeyID)
	switch {
	case errors.Is(err, errUnknownKid):
		return webhookRejected, errWebhookSignature
	case err != nil:
		// Without the service's keys nothing can be checked: the service
		// delivers it again later.
		s.log.ErrorContext(ctx, "bff: webhook keys unavailable", slog.Any("err", err))
		return webhookUnavailable, errWebhookUnavailable
	}
	id, err := webhooksig.Verify(header, body, keys, s.now())
	switch {
	case errors.Is(err, webhooksig.ErrBody):
		return webhookRejected, errWebhookMalformed
	case err != nil:
		return webhookRejected, errWebhookSignature
	}
	var env webhooksig.Event
	if err := json.Unmarshal(body, &env); err != nil || env.ID != id {
		return webhookRejected, errWebhookMalformed
	}
	uuid, ok := strings.CutPrefix(id, "Webhook:")
	if !ok || !isUUID(uuid) || !webhookType.MatchString(env.Type) {
		return webhookRejected, errWebhookMalformed
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, body); err != nil {
		return webhookRejected, errWebhookMalformed
	}
	ev := Event{ID: id, Type: env.Type, CustomerID: customerOf(env.Type, env.Data), Body: compact.Bytes()}
	added, err := s.events.Add(ctx, ev)
	if err != nil {
		if s.storeUnavailable(err) { // a failover: the service sends it again
			s.log.WarnContext(ctx, "bff: recording a webhook: the BFF's database is unavailable", slog.String("id", ev.ID), slog.Any("err", err))
		} else {
			s.log.ErrorContext(ctx, "bff: recording a webhook", slog.String("id", ev.ID), slog.Any("err", err))
		}
		return webhookUnavailable, errWebhookUnavailable
	}
	result = webhookNew
	if !added {
		s.log.DebugContext(ctx, "bff: webhook delivered again", slog.String("id", ev.ID))
		result = webhookDuplicate
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return result, c.Status(http.StatusOK).JSON(fiber.Map{"received": true})
}

// customerOf is the customer whose browsers hear a webhook: its resource's
// customerId (a transaction, an internal or external account), or the
// resource's own id for a CUSTOMER.* event; "" when there is none.
func customerOf(typ string, data json.RawMessage) string {
	var d struct {
		CustomerID string `json:"customerId"`
		ID         string `json:"id"`
	}
	if len(data) == 0 || json.Unmarshal(data, &d) != nil {
		return ""
	}
	if validID("Customer", d.CustomerID) {
		return d.CustomerID
	}
	if strings.HasPrefix(typ, "CUSTOMER.") && validID("Customer", d.ID) {
		return d.ID
	}
	return ""
}
