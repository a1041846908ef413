package service

import (
	"encoding/json"
	"net/http"

	"paywallet/service/payments"
	"paywallet/shared/wire"
)

// once calls op, an operation that takes an Idempotency-Key
// (payments.Once), and writes its answer: the domain looks the key up,
// records the answer in the operation's own transaction, stores the
// refusals to replay and settles races (payments/idempotency.go). The
// HTTP layer reads the key and the request's hash, says how it answers a
// refusal (refusal), and marks a replayed answer Idempotent-Replayed.
func (s *Service) once(w http.ResponseWriter, r *http.Request, scope string, body []byte, status int, op func(payments.Once) (payments.Answer, error)) error {
	a, err := op(payments.Once{Scope: scope, Key: r.Header.Get(wire.HeaderIdempotencyKey),
		RequestHash: payments.RequestHash(r.Method, r.URL.Path, body), Status: status, Refusal: answerOf})
	if err != nil {
		return err
	}
	if a.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeRawJSON(w, a.Status, a.Body)
	return nil
}

// answerOf is the status and encoded body the HTTP layer answers err with;
// ok is false for an error it does not know (answered 500).
func answerOf(err error) (status int, body []byte, ok bool) {
	e, known := httpError(err)
	if !known {
		return 0, nil, false
	}
	body, mErr := json.Marshal(e.body())
	return e.Status, body, mErr == nil
}
