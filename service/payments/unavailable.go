package payments

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"paywallet/service/store"
)

// ErrUnavailable is the store's [store.ErrUnavailable], for the HTTP layer,
// which imports no store package: an operation's error that wraps it means
// the database went away (a crash, a failover) and nothing is half done, and is
// answered 503 SERVICE_UNAVAILABLE with Retry-After rather than 500. The
// operations pass store errors on wrapped with %w (or unwrapped), so this
// identity survives to the HTTP layer; internalStep keeps it where an
// internal step's refusal is deliberately flattened to a 500.
var ErrUnavailable = store.ErrUnavailable

// ErrContention is the store's [store.ErrContention] for the HTTP layer:
// a transaction that lost its races with concurrent ones until the store
// gave up. Nothing was done; answered 503 with Retry-After, never stored
// under an Idempotency-Key.
var ErrContention = store.ErrContention

// internalStep is the error of an internal step (the sandbox trigger's
// setup) that failed: a refusal of that step is the service's fault, so its
// text is kept but not its *Error identity (it is answered 500), while a
// store that became unavailable stays ErrUnavailable (answered 503: retry).
func internalStep(what string, err error) error {
	if errors.Is(err, ErrUnavailable) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %v", what, err)
}

// ChallengePrefix starts the id of every signed-retry challenge
// ("Request:<uuid>", ids.New("Request")).
const ChallengePrefix = "Request:"

// IsChallengeID reports whether a Request-Id header names a signed-retry
// challenge. Any other Request-Id is a caller's correlation id (the BFF
// sends its own request id on every call): it is no half of a signed retry
// and the transport leaves it out of the SignedCall, as the spec has both
// retry headers ignored on the initial call.
func IsChallengeID(id string) bool { return strings.HasPrefix(id, ChallengePrefix) }

// logWorker logs a worker's failed round: at warn when the database went
// away (a failover: the next round resumes on the new primary, nothing
// was half done), at error otherwise.
func (s *Service) logWorker(ctx context.Context, msg string, err error) {
	if errors.Is(err, ErrUnavailable) {
		s.log.WarnContext(ctx, msg+" (database unavailable; the next round retries)", "err", err)
		return
	}
	s.log.ErrorContext(ctx, msg, "err", err)
}
