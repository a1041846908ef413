package webhooksig

import "encoding/json"

// Event is the body of a webhook: the reference API's envelope plus
// Sequence, the service's per-resource counter (1, 2, 3, … for each
// transaction, account or customer id). A receiver applies an event only if
// its sequence is higher than the last one it applied for the resource
// (Data's "id"); TEST events have no data and no sequence.
type Event struct {
	ID        string          `json:"id"` // Webhook:<uuid>; deduplicate by it
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"` // RFC 3339, when the event happened
	Data      json.RawMessage `json:"data,omitempty"`
	Sequence  int64           `json:"sequence,omitempty"`
}

// Event types the service sends (the reference API's WebhookType values).
const (
	OutgoingPaymentPending         = "OUTGOING_PAYMENT.PENDING"
	OutgoingPaymentProcessing      = "OUTGOING_PAYMENT.PROCESSING"
	OutgoingPaymentCompleted       = "OUTGOING_PAYMENT.COMPLETED"
	OutgoingPaymentFailed          = "OUTGOING_PAYMENT.FAILED"
	OutgoingPaymentExpired         = "OUTGOING_PAYMENT.EXPIRED"
	OutgoingPaymentRefundCompleted = "OUTGOING_PAYMENT.REFUND_COMPLETED"
	IncomingPaymentCompleted       = "INCOMING_PAYMENT.COMPLETED"
	InternalAccountBalanceUpdated  = "INTERNAL_ACCOUNT.BALANCE_UPDATED"
	InternalAccountStatusUpdated   = "INTERNAL_ACCOUNT.STATUS_UPDATED"
	ExternalAccountStatusUpdated   = "EXTERNAL_ACCOUNT.STATUS_UPDATED"
	Test                           = "TEST"
)
