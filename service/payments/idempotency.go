package payments

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"paywallet/service/store"
	"paywallet/shared/wire"
)

// Idempotency-Key (grid-api-facts §9, DESIGN "Wire conventions"): a
// money-moving operation called again with the same key gets the stored
// answer of the first call, for successes and refusals alike; a failure of
// the service (a 5xx) is not stored, so the request can be retried and is
// then processed again. A key names one request: reusing it for another
// body is 409 CONFLICT. Keys are scoped by operation and target (Once), and
// records are deleted after idempotencyTTL (sweepIdempotency).
//
// The operations that take a key (CreateQuote, ExecuteQuote, TransferIn,
// TransferOut, FundSandbox, SandboxSend, SandboxUmaReceive, the agent's
// quote, execute and transfers, ApproveAgentAction) take a Once and answer
// an Answer: the encoded body to send and its status. The record is
// written in the operation's own transaction (a then passed to commit), so
// an answer is recorded exactly when its effect commits.

// maxIdempotencyKey bounds the key (IETF draft keys are UUIDs; any
// printable ASCII token up to this length is allowed).
const maxIdempotencyKey = 255

// idempotencyTTL is how long a stored Idempotency-Key answer is replayed.
const idempotencyTTL = 24 * time.Hour

// Once is how a call of an operation is made under an Idempotency-Key, as
// the transport read it.
type Once struct {
	// Scope names the operation and its target ("quotes.execute <id>"):
	// a key is one request within its scope.
	Scope string
	// Key is the Idempotency-Key; "" runs the operation without one.
	Key string
	// RequestHash identifies the request (RequestHash): the same key with
	// another hash is 409 CONFLICT.
	RequestHash []byte
	// Status is the status of the operation's success, stored with its
	// answer.
	Status int
	// Refusal is how the transport answers a refusal of the operation: its
	// status and encoded body, stored under the key when the refusal is
	// one to replay (storedRefusal). ok is false for an error the
	// transport does not know (it answers 500): such is never stored.
	Refusal func(err error) (status int, body []byte, ok bool)
}

// Answer is what an operation called with a Once answers: the encoded
// JSON body and its status, and whether it is a stored answer replayed.
type Answer struct {
	Status   int
	Body     []byte
	Replayed bool
}

// RequestHash identifies a request for idempotency: method, path and the
// canonical body (so re-serialising the same JSON is the same request).
func RequestHash(method, path string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(method + " " + path + "\n"))
	if c, err := CanonicalBodyHash(body); err == nil {
		h.Write(c)
	} else {
		h.Write(body)
	}
	return h.Sum(nil)
}

func validIdempotencyKey(k string) bool {
	if len(k) == 0 || len(k) > maxIdempotencyKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// neverStored are the refusals not stored under a key: they depend on more
// than the request's hash (method, path, body) or on the moment. A 401
// answers the Service-Wallet-Signature and Request-Id headers or the
// credential, which a client fixes and sends again with the same key; a
// 429 answers the moment; a 5xx is the service's failure, and the request
// may be retried and then runs. Stored, any would be replayed for the
// key's whole life and the request could never succeed under it.
// TestNeverStoredAreThe401s429sAnd5xx (package service) keeps this the
// set of codes the transport answers 401, 429 or 5xx.
var neverStored = map[string]bool{
	CodeUnauthorized:          true,
	CodeSignatureMissing:      true,
	CodeSignatureMalformed:    true,
	CodeSignatureBodyMismatch: true,
	CodeSignatureInvalid:      true,
	CodeRequestIDMissing:      true,
	CodeRateLimited:           true,
	CodeInternal:              true,
	CodeServiceUnavailable:    true,
	// The daily limit's 429 answers the last 24 hours (limits.go).
	CodeDailyVolumeLimitExceeded: true,
}

// NeverStored reports whether a refusal with this code is never stored
// under an Idempotency-Key (see neverStored).
func NeverStored(code string) bool { return neverStored[code] }

// storedRefusal is the record of a refusal to store under o's key, or nil
// when it is not one to store: not an operation's refusal, a code of
// neverStored, or one the transport does not know.
func (s *Service) storedRefusal(o Once, err error) *store.IdempotencyRecord {
	var e *Error
	if !errors.As(err, &e) || neverStored[e.Code] || o.Refusal == nil {
		return nil
	}
	status, body, ok := o.Refusal(err)
	if !ok {
		return nil
	}
	return &store.IdempotencyRecord{Scope: o.Scope, Key: o.Key, RequestHash: o.RequestHash, Status: status, Body: body, CreatedAt: s.now()}
}

// errChallenged carries a signed operation's first call out of keyed: its
// challenge is never recorded.
var errChallenged = errors.New("payments: the operation answered a signed-retry challenge")

// once runs op, a writing operation, under o (see keyed).
func once[T any](ctx context.Context, s *Service, o Once, op func(fin *then) (T, error)) (Answer, error) {
	return s.keyed(ctx, o, func(fin *then) (*wire.SignedRequestChallenge, error) {
		_, err := op(fin)
		return nil, err
	})
}

// onceSigned runs a signed operation under o: the first call's challenge
// is answered 202 and never recorded, the signed retry's result is
// recorded and answered with o.Status.
func onceSigned[T any](ctx context.Context, s *Service, o Once, op func(fin *then) (Signed[T], error)) (Answer, error) {
	return s.keyed(ctx, o, func(fin *then) (*wire.SignedRequestChallenge, error) {
		out, err := op(fin)
		return out.Challenge, err
	})
}

// keyed runs op and answers its result with o.Status. The result is
// encoded inside op's transaction (the then op passes to its commit) and,
// when o has a key, recorded there; a refusal to store (storedRefusal) is
// recorded right after, the operation's writes rolled back first. A call
// repeating the key replays the record instead of running op. Two calls
// racing with one key cannot both run op to success: the loser's record
// insert conflicts and it replays the winner's; a loser that fails before
// that (a signed retry whose challenge the winner used) looks for the
// winner's record and replays it too.
//
// Nothing that can fail runs after op's transaction commits: the answer is
// encoded inside it and sent from those bytes, so a call whose commit
// succeeded is never answered with a failure (TestAnswerAfterCommit). Only
// an error of the commit itself leaves the outcome unknown; that is not
// recorded, and a retry with the key replays the record if the commit did
// happen.
func (s *Service) keyed(ctx context.Context, o Once, op func(fin *then) (*wire.SignedRequestChallenge, error)) (Answer, error) {
	key := o.Key
	if key != "" && !validIdempotencyKey(key) {
		return Answer{}, errorf(CodeInvalidInput, "Idempotency-Key must be 1 to 255 printable ASCII characters")
	}
	var replay *store.IdempotencyRecord
	var err error
	if key != "" {
		// Looked up before op's transaction, not in it: on PostgreSQL a
		// serializable read of a key that is not there locks the index
		// page where it would be, and concurrent requests inserting other
		// keys on that page then fail each other and retry. The insert
		// below still settles a race on one key (ErrConflict).
		replay, err = s.idempotencyRecord(ctx, o.Scope, key)
		switch {
		case err == nil:
		case errors.Is(err, store.ErrNotFound):
			replay, err = nil, nil
		default:
			return Answer{}, err
		}
	}
	var encoded []byte
	var challenge *wire.SignedRequestChallenge
	if replay == nil {
		record := &then{run: func(ctx context.Context, tx store.Tx, result any) error {
			var err error
			if encoded, err = json.Marshal(result); err != nil {
				return err
			}
			if key == "" {
				return nil
			}
			return tx.PutIdempotencyRecord(ctx, &store.IdempotencyRecord{Scope: o.Scope, Key: key, RequestHash: o.RequestHash,
				Status: o.Status, Body: encoded, CreatedAt: s.now()})
		}}
		challenge, err = op(record)
		if err == nil && challenge != nil {
			err = errChallenged
		}
	}
	if errors.Is(err, store.ErrConflict) && key != "" {
		// Another call with this key committed first.
		replay, err = s.idempotencyRecord(ctx, o.Scope, key)
	}
	if err != nil && key != "" && s.storedRefusal(o, err) == nil {
		// An answer that is not stored under the key (a 401, a 5xx, a
		// challenge) may be this attempt's loss of a race with another
		// attempt of the same request, which committed meanwhile: a
		// client retrying while its first attempt still ran. A signed
		// retry's loser finds the challenge used (401) after the winner
		// committed. The key's answer is the winner's.
		if rec, lookErr := s.idempotencyRecord(ctx, o.Scope, key); lookErr == nil {
			replay, err = rec, nil
		}
	}
	if errors.Is(err, errChallenged) {
		body, err := encodeJSON(challenge)
		return Answer{Status: 202, Body: body}, err
	}
	if err != nil {
		if key == "" {
			return Answer{}, err
		}
		rec := s.storedRefusal(o, err)
		if rec == nil {
			return Answer{}, err
		}
		stored, recErr := s.recordRefusal(ctx, rec)
		if errors.Is(recErr, ErrUnavailable) {
			// The refusal cannot be kept under the key: answered
			// as it is, a retry after a lost answer would run the
			// request again and might get another answer (money
			// came in meanwhile, the quote moved on). Nothing was
			// done either way: the client retries, as for any 503.
			return Answer{}, recErr
		}
		if recErr != nil {
			return Answer{}, err
		}
		if stored == rec {
			// This call's own refusal, kept: answered as it is, not
			// as a replay.
			return Answer{Status: rec.Status, Body: rec.Body}, nil
		}
		replay = stored
	}
	if replay != nil {
		if !bytes.Equal(replay.RequestHash, o.RequestHash) {
			return Answer{}, errorf(CodeConflict, "this Idempotency-Key was already used for a different request")
		}
		return Answer{Status: replay.Status, Body: replay.Body, Replayed: true}, nil
	}
	return Answer{Status: o.Status, Body: encoded}, nil
}

// encodeJSON encodes v as the transport writes an answer it encodes
// itself: without HTML escaping and without the trailing newline.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// recordRefusal stores a refusal under its key. If a record appeared
// meanwhile (a racing call with the same key), that one is returned. An
// error wraps ErrUnavailable when the database went away.
func (s *Service) recordRefusal(ctx context.Context, rec *store.IdempotencyRecord) (*store.IdempotencyRecord, error) {
	err := s.store.Tx(ctx, func(tx store.Tx) error { return tx.PutIdempotencyRecord(ctx, rec) })
	switch {
	case err == nil:
		return rec, nil
	case errors.Is(err, store.ErrConflict):
		return s.idempotencyRecord(ctx, rec.Scope, rec.Key)
	}
	if errors.Is(err, ErrUnavailable) {
		s.log.WarnContext(ctx, "storing an idempotent refusal: the database went away", "err", err)
	} else {
		s.log.ErrorContext(ctx, "storing an idempotent refusal failed", "err", err)
	}
	return nil, err
}

func (s *Service) idempotencyRecord(ctx context.Context, scope, key string) (*store.IdempotencyRecord, error) {
	return read(ctx, s, func(tx store.Tx) (*store.IdempotencyRecord, error) {
		return tx.GetIdempotencyRecord(ctx, scope, key)
	})
}

// sweepIdempotency deletes the records older than idempotencyTTL.
func (s *Service) sweepIdempotency(ctx context.Context) error {
	return s.store.Tx(ctx, func(tx store.Tx) error {
		_, err := tx.DeleteIdempotencyRecords(ctx, s.now().Add(-idempotencyTTL))
		return err
	})
}

// then is what the caller of an operation runs in the operation's own
// transaction, after the operation's effect and before the commit, with
// its result: the Idempotency-Key record (keyed), an agent's action
// recorded with the payment it made. It is passed to the operation's
// internal form as a plain argument, and by it to commit. An error rolls
// the effect back. A then runs in exactly one commit: a second commit with
// one that already ran fails (errThenSpent) rather than record two answers
// for one request.
type then struct {
	run func(ctx context.Context, tx store.Tx, result any) error
	ran atomic.Bool
	// outer is the then this one runs inside of (andThen): it is spent
	// with it.
	outer *then
}

// andThen runs mine in the operation's transaction with its result, then
// outer (when not nil) with what mine returns: an agent operation's
// record, then its caller's Idempotency-Key record of the agent's answer.
func andThen(outer *then, mine func(ctx context.Context, tx store.Tx, result any) (any, error)) *then {
	return &then{outer: outer, run: func(ctx context.Context, tx store.Tx, result any) error {
		out, err := mine(ctx, tx, result)
		if err != nil || outer == nil {
			return err
		}
		return outer.run(ctx, tx, out)
	}}
}

// spent tells whether t, or one it runs inside of, already ran.
func (t *then) spent() bool {
	for ; t != nil; t = t.outer {
		if t.ran.Load() {
			return true
		}
	}
	return false
}

// markRan records that t, and those it runs inside of, ran.
func (t *then) markRan() {
	for ; t != nil; t = t.outer {
		t.ran.Store(true)
	}
}

// errThenSpent is a programming error: a second commit with a then that
// already ran in an earlier one.
var errThenSpent = errors.New("payments: a second commit with an after-effect that already ran (an operation must record its answer in one commit)")
