package payments

import (
	"bytes"
	"context"
	"errors"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

// The signed-retry pattern (spec "Signed-retry pattern", DESIGN "Wire
// conventions"): the first call of an operation answers a challenge with a
// payloadToSign and a requestId (202 over HTTP); the retry repeats the same
// body with a stamp over payloadToSign (Service-Wallet-Signature) and the
// requestId (Request-Id), which reach the operation as a [SignedCall]. The pending challenge is stored, bound to the operation, its
// target, the account and the hash of the canonical body, and is consumed in
// the same transaction as the operation's effect, so a refused retry changes
// nothing and a retry can succeed only once.

// operation identifies what a challenge authorizes.
type operation struct {
	name      string // e.g. "auth.credentials.verify"
	targetID  string // the id in the path
	accountID string
	bodyHash  []byte
	// stepUp, when set, holds the retry until the person confirms the
	// action (stepup.go): the challenge gets a step-up bound to its
	// payloadToSign, and completeRetry uses it.
	stepUp *stepUpNeed
}

// issueChallenge stores a pending challenge for op with the given payload.
// boundKey, when set, is the only key whose stamp completes the retry.
func (s *Service) issueChallenge(ctx context.Context, tx store.Tx, op operation, payload string, boundKey *walletcrypto.PublicKey) (*store.Challenge, error) {
	now := s.now()
	c := &store.Challenge{
		ID:        ids.New("Request"),
		Operation: op.name,
		TargetID:  op.targetID,
		AccountID: op.accountID,
		BodyHash:  op.bodyHash,
		Payload:   payload,
		CreatedAt: now,
		ExpiresAt: now.Add(s.cfg.ChallengeTTL),
	}
	if boundKey != nil {
		c.PublicKey = boundKey.Compressed()
	}
	if err := tx.CreateChallenge(ctx, c); err != nil {
		return nil, err
	}
	return c, nil
}

// activityChallenge issues the challenge of a signed operation's first
// call: its payloadToSign is the activity typ with params on op's account
// (see activity). boundKey, when set, is the only key whose stamp completes
// the retry; otherwise the operation's retry decides who may sign. The
// challenge answers credType as its type ("" for none).
func (s *Service) activityChallenge(ctx context.Context, tx store.Tx, op operation, credType, typ string, params map[string]any, boundKey *walletcrypto.PublicKey) (*wire.SignedRequestChallenge, error) {
	payload, err := s.activity(op.accountID, typ, params)
	if err != nil {
		return nil, err
	}
	c, err := s.issueChallenge(ctx, tx, op, payload, boundKey)
	if err != nil {
		return nil, err
	}
	out := challengeJSON(credType, c)
	if op.stepUp != nil {
		st, err := s.newStepUp(ctx, tx, op.stepUp, c.ID, payload, c.ExpiresAt, false)
		if err != nil {
			return nil, err
		}
		out.ScaChallenge = st.challenge
	}
	return out, nil
}

// completeRetry checks a retry against its pending challenge and consumes
// it. keyAllowed decides whether the stamp's key may sign for the account
// when the challenge has no bound key (for example: the key of an active
// session of the account). It must run inside the transaction that applies
// the operation's effect.
//
// The checks run in a fixed order and each failure has its own 401 code:
// malformed stamp, unknown/expired/used request id, changed body, bad
// signature, wrong key.
func (s *Service) completeRetry(ctx context.Context, tx store.Tx, op operation, h SignedCall, keyAllowed func(*walletcrypto.PublicKey) (bool, error)) (*store.Challenge, error) {
	sandboxLiteral := h.Stamp == wire.SandboxSignature
	var stamp *walletcrypto.Stamp
	switch {
	case sandboxLiteral && s.mode == ModeSandbox:
	case sandboxLiteral:
		return nil, errorf(CodeSignatureInvalid, "the sandbox signature is not accepted in production mode")
	default:
		var err error
		stamp, err = walletcrypto.ParseStamp(h.Stamp)
		if err != nil {
			return nil, errorf(CodeSignatureMalformed, "Service-Wallet-Signature is not a valid stamp: "+stampProblem(err))
		}
	}

	c, err := s.pendingChallenge(ctx, tx, h.RequestID, op.name, op.targetID)
	if err != nil {
		return nil, err
	}
	if c.AccountID != op.accountID {
		return nil, errUnknownRequest
	}
	if !bytes.Equal(c.BodyHash, op.bodyHash) {
		return nil, errorf(CodeSignatureBodyMismatch, "the retry body differs from the body of the first call")
	}
	if stamp != nil {
		if err := stamp.Verify([]byte(c.Payload)); err != nil {
			return nil, errorf(CodeSignatureInvalid, "the stamp does not verify over payloadToSign")
		}
		if len(c.PublicKey) > 0 {
			bound, err := walletcrypto.ParsePublicKey(c.PublicKey)
			if err != nil {
				return nil, err
			}
			if !bound.Equal(stamp.PublicKey) {
				return nil, errorf(CodeSignatureInvalid, "the stamp was made with a key this challenge is not bound to")
			}
		} else {
			ok, err := keyAllowed(stamp.PublicKey)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, errorf(CodeSignatureInvalid, "the stamp's key is not the key of an active session of this account")
			}
		}
	}
	// A held action goes on only with its confirmation (stepup.go).
	if err := s.consumeStepUp(ctx, tx, c); err != nil {
		return nil, err
	}
	won, err := tx.ConsumeChallenge(ctx, c.ID, s.now())
	if err != nil {
		return nil, err
	}
	if !won {
		return nil, errorf(CodeUnauthorized, "this Request-Id was already used")
	}
	return c, nil
}

// errUnknownRequest answers a Request-Id that names no pending challenge of
// the operation: unknown, malformed, or another operation's.
var errUnknownRequest = errorf(CodeUnauthorized, "Request-Id does not match a pending challenge of this operation")

// pendingChallenge loads an unconsumed, unexpired challenge of the
// operation on the target, or answers its 401.
func (s *Service) pendingChallenge(ctx context.Context, tx store.Tx, requestID, op, targetID string) (*store.Challenge, error) {
	if !ids.Valid("Request", requestID) {
		return nil, errUnknownRequest
	}
	ch, err := tx.GetChallenge(ctx, requestID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errUnknownRequest
	}
	if err != nil {
		return nil, err
	}
	switch {
	case ch.Operation != op || ch.TargetID != targetID:
		return nil, errUnknownRequest
	case !ch.ConsumedAt.IsZero():
		return nil, errorf(CodeUnauthorized, "this Request-Id was already used")
	case !s.now().Before(ch.ExpiresAt):
		return nil, errorf(CodeUnauthorized, "this Request-Id has expired; start again")
	}
	return ch, nil
}

// stampProblem names what is wrong with a stamp header without echoing it.
func stampProblem(err error) string {
	var se *walletcrypto.StampError
	if errors.As(err, &se) {
		return se.Reason.String()
	}
	return "unreadable"
}

// challengeJSON is a first call's answer: the challenge to sign.
func challengeJSON(typ string, c *store.Challenge) *wire.SignedRequestChallenge {
	return &wire.SignedRequestChallenge{Type: typ, PayloadToSign: c.Payload, RequestID: c.ID, ExpiresAt: timestamp(c.ExpiresAt)}
}

// SignedCall is what an operation that needs a wallet signature gets beside
// its request: the canonical hash of the request body (the first call binds
// its challenge to it, the retry must repeat it; see CanonicalBodyHash) and,
// on the retry, the stamp over the challenge's payloadToSign and the
// challenge's requestId. The HTTP layer fills it from the body and the
// Service-Wallet-Signature and Request-Id headers, refusing one header
// without the other.
type SignedCall struct {
	BodyHash  []byte
	Stamp     string // empty on the first call
	RequestID string // empty on the first call
}

// Check refuses one retry header without the other: a signature without
// Request-Id is REQUEST_ID_MISSING, a Request-Id without a signature is
// WALLET_SIGNATURE_MISSING (facts §4.6).
func (c SignedCall) Check() error {
	switch {
	case c.Stamp == "" && c.RequestID != "":
		return errorf(CodeSignatureMissing, "Request-Id was sent without Service-Wallet-Signature")
	case c.Stamp != "" && c.RequestID == "":
		return errorf(CodeRequestIDMissing, "Service-Wallet-Signature was sent without Request-Id")
	}
	return nil
}

// IsRetry reports whether the call carries a signature.
func (c SignedCall) IsRetry() bool { return c.Stamp != "" || c.RequestID != "" }

// Signed is the result of an operation that needs a wallet signature: on
// the first call the challenge to sign (and Result is its zero value), on
// the signed retry the operation's result (and Challenge is nil).
type Signed[T any] struct {
	Challenge *wire.SignedRequestChallenge
	Result    T
}

// Parts is the challenge of a first call (nil on a retry) and the retry's
// result, for a transport that answers any signed operation alike.
func (v Signed[T]) Parts() (*wire.SignedRequestChallenge, any) { return v.Challenge, v.Result }

// challenged is the first call's answer of a signed operation.
func challenged[T any](c *wire.SignedRequestChallenge) Signed[T] { return Signed[T]{Challenge: c} }

// done is the retry's answer of a signed operation.
func done[T any](v T) Signed[T] { return Signed[T]{Result: v} }
