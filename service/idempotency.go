package service

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"paywallet/service/payments"
	"paywallet/service/store"
	"paywallet/shared/wire"
)

// Idempotency-Key (grid-api-facts §9, DESIGN "Wire conventions"): a
// money-moving POST sent again with the same key gets the stored answer of
// the first one, for 2xx and 4xx answers alike; a 5xx is not stored, so the
// request can be retried and is then processed again. A key names one
// request: reusing it for another body is 409 CONFLICT. Keys are scoped by
// operation and target, and records are deleted after idempotencyTTL.

// maxIdempotencyKey bounds the header (IETF draft keys are UUIDs; we allow
// any printable ASCII token up to this length).
const maxIdempotencyKey = 255

// idempotent runs op, a writing operation, and answers its result with
// status. When the request carries an Idempotency-Key, the answer is
// recorded in the operation's own transaction (a payments.CommitHook: on
// success) or right after it (a 4xx refusal; the operation's writes are
// rolled back first), and a request repeating the key replays the record
// instead of running op. Two requests racing with one key cannot both run
// op to success: the loser's record insert conflicts and it replays the
// winner's; a loser that fails before that (a signed retry whose challenge
// the winner used) looks for the winner's record and replays it too.
//
// Nothing that can fail runs after op's transaction commits: the answer is
// encoded inside it and written from those bytes, so a request whose commit
// succeeded is never answered 5xx (TestAnswerAfterCommit). Only an error of
// the commit itself leaves the outcome unknown; that is a 5xx, which is not
// recorded, and a retry with the key replays the record if the commit did
// happen.
func (s *Service) idempotent(w http.ResponseWriter, r *http.Request, scope string, body []byte, status int, op func(ctx context.Context) (any, error)) error {
	ctx := r.Context()
	key := r.Header.Get(wire.HeaderIdempotencyKey)
	if key != "" && !validIdempotencyKey(key) {
		return errorf(http.StatusBadRequest, payments.CodeInvalidInput, "Idempotency-Key must be 1 to 255 printable ASCII characters")
	}
	reqHash := requestHash(r, body)
	var replay *store.IdempotencyRecord
	var err error
	if key != "" {
		// Looked up before op's transaction, not in it: on PostgreSQL a
		// serializable read of a key that is not there locks the index
		// page where it would be, and concurrent requests inserting other
		// keys on that page then fail each other and retry. The insert
		// below still settles a race on one key (ErrConflict).
		replay, err = s.idempotencyRecord(ctx, scope, key)
		switch {
		case err == nil:
		case errors.Is(err, store.ErrNotFound):
			replay, err = nil, nil
		default:
			return err
		}
	}
	var encoded []byte
	if replay == nil {
		record := func(ctx context.Context, tx store.Tx, result any) error {
			var err error
			if encoded, err = json.Marshal(result); err != nil {
				return err
			}
			if key == "" {
				return nil
			}
			return tx.PutIdempotencyRecord(ctx, &store.IdempotencyRecord{Scope: scope, Key: key, RequestHash: reqHash,
				Status: status, Body: encoded, CreatedAt: s.now()})
		}
		_, err = op(payments.WithCommitHook(ctx, record))
	}
	if errors.Is(err, store.ErrConflict) && key != "" {
		// Another request with this key committed first.
		replay, err = s.idempotencyRecord(ctx, scope, key)
	}
	if err != nil && key != "" {
		if e, known := httpError(err); !known || !replayable(e) {
			// An answer that is not stored under the key (a 401, a 5xx)
			// may be this attempt's loss of a race with another attempt
			// of the same request, which committed meanwhile: a client
			// retrying while its first attempt still ran. A signed
			// retry's loser finds the challenge used (401) after the
			// winner committed. The key's answer is the winner's.
			if rec, lookErr := s.idempotencyRecord(ctx, scope, key); lookErr == nil {
				replay, err = rec, nil
			}
		}
	}
	if err != nil {
		e, known := httpError(err)
		if key == "" || !known || !replayable(e) {
			return err
		}
		rec, stored := s.recordRefusal(ctx, scope, key, reqHash, e)
		if !stored {
			return err
		}
		replay = rec
	}
	if replay != nil {
		if string(replay.RequestHash) != string(reqHash) {
			return errorf(http.StatusConflict, payments.CodeConflict, "this Idempotency-Key was already used for a different request")
		}
		w.Header().Set("Idempotent-Replayed", "true")
		writeRawJSON(w, replay.Status, replay.Body)
		return nil
	}
	writeRawJSON(w, status, encoded)
	return nil
}

// replayable reports whether a refusal is stored under its key. A 5xx is
// not (the request may be retried and then runs). Neither is a refusal
// that depends on more than the request's hash (method, path, body): a 401
// answers the Service-Wallet-Signature and Request-Id headers, which a
// client fixes and sends again with the same key, and a 429 answers the
// moment. Stored, either would be replayed for the key's whole life and
// the request could never succeed under it.
func replayable(e *Error) bool {
	return e.Status < 500 && e.Status != http.StatusUnauthorized && e.Status != http.StatusTooManyRequests
}

// recordRefusal stores a 4xx answer under the key. If a record appeared
// meanwhile (a racing request with the same key), that one is returned.
func (s *Service) recordRefusal(ctx context.Context, scope, key string, reqHash []byte, e *Error) (*store.IdempotencyRecord, bool) {
	body, err := json.Marshal(e.body())
	if err != nil {
		return nil, false
	}
	rec := &store.IdempotencyRecord{Scope: scope, Key: key, RequestHash: reqHash, Status: e.Status, Body: body, CreatedAt: s.now()}
	err = s.store.Tx(ctx, func(tx store.Tx) error { return tx.PutIdempotencyRecord(ctx, rec) })
	switch {
	case err == nil:
		return rec, true
	case errors.Is(err, store.ErrConflict):
		other, err := s.idempotencyRecord(ctx, scope, key)
		return other, err == nil
	}
	s.log.Error("storing an idempotent refusal failed", "err", err)
	return nil, false
}

func (s *Service) idempotencyRecord(ctx context.Context, scope, key string) (*store.IdempotencyRecord, error) {
	var rec *store.IdempotencyRecord
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		var err error
		rec, err = tx.GetIdempotencyRecord(ctx, scope, key)
		return err
	})
	return rec, err
}

// requestHash identifies a request for idempotency: method, path and the
// canonical body (so re-serialising the same JSON is the same request).
func requestHash(r *http.Request, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(r.Method + " " + r.URL.Path + "\n"))
	if c, err := payments.CanonicalBodyHash(body); err == nil {
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

// now is the clock of the records, the domain's.
func (s *Service) now() time.Time { return s.ops.Now() }
