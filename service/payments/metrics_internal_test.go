package payments

import (
	"errors"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"paywallet/service/store"
	"paywallet/shared/wire"
)

// TestSignInCounter: a session issued is a success, a refusal a failure;
// an e-mail code's first leg (a challenge) and the service's own failure
// are neither.
func TestSignInCounter(t *testing.T) {
	challenge := &wire.SignedRequestChallenge{RequestID: "Request:x"}
	for _, tc := range []struct {
		name, method string
		challenge    *wire.SignedRequestChallenge
		err          error
		result       string // "" when nothing is counted
	}{
		{"a session", wire.TypePasskey, nil, nil, "success"},
		{"the first leg", wire.TypeEmailOTP, challenge, nil, ""},
		{"a wrong code", wire.TypeEmailOTP, nil, errorf(CodeUnauthorized, "wrong code"), "failure"},
		{"a lock-out", wire.TypeEmailOTP, nil, rateLimited(ReasonCredentialLocked, "locked", 60), "failure"},
		{"a bad token", wire.TypeOAuth, nil, fmt.Errorf("verify: %w", errorf(CodeUnauthorized, "bad token")), "failure"},
		{"the database went away", wire.TypePasskey, nil, fmt.Errorf("store: commit: %w", store.ErrUnavailable), ""},
		{"the mailer is down", wire.TypeEmailOTP, nil, errorf(CodeServiceUnavailable, "later"), ""},
		{"an internal error", wire.TypeOAuth, nil, errors.New("boom"), ""},
		{"an unknown method", "PIGEON", nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := newMetrics(prometheus.NewRegistry())
			if err != nil {
				t.Fatal(err)
			}
			m.signIn(tc.method, tc.challenge, tc.err)
			for _, method := range []string{wire.TypeEmailOTP, wire.TypePasskey, wire.TypeOAuth} {
				for _, result := range []string{"success", "failure"} {
					want := 0.0
					if method == tc.method && result == tc.result {
						want = 1
					}
					var v dto.Metric
					if err := m.signIns.WithLabelValues(method, result).Write(&v); err != nil {
						t.Fatal(err)
					}
					if got := v.GetCounter().GetValue(); got != want {
						t.Errorf("%s %s = %v, want %v", method, result, got, want)
					}
				}
			}
		})
	}
}

// TestInternalStepKeepsUnavailable: an internal step's refusal becomes a
// 500 (no *Error identity), a database gone stays ErrUnavailable (503).
func TestInternalStepKeepsUnavailable(t *testing.T) {
	gone := internalStep("step", fmt.Errorf("store: begin: %w", store.ErrUnavailable))
	if !errors.Is(gone, ErrUnavailable) {
		t.Errorf("%v lost ErrUnavailable", gone)
	}
	var e *Error
	refused := internalStep("step", errorf(CodeForbidden, "no"))
	if errors.As(refused, &e) || errors.Is(refused, ErrUnavailable) {
		t.Errorf("%v kept the refusal's identity", refused)
	}
}
