package payments

import (
	"context"
	"errors"
	"sync/atomic"

	"paywallet/service/store"
	"paywallet/shared/wire"
)

// CommitHook runs inside an operation's transaction, after the operation's
// effect and before the commit, with the operation's result. The HTTP layer
// records the answer of a request with an Idempotency-Key there, so an
// answer is recorded exactly when its effect commits and nothing that can
// fail runs after the commit. An error rolls the effect back.
type CommitHook func(ctx context.Context, tx store.Tx, result any) error

type commitHookKey struct{}

// hookState is a CommitHook under a context, with whether a commit has
// already run it: a hook runs in exactly one commit, so an operation that
// committed twice under one would record two answers for one request.
type hookState struct {
	hook CommitHook
	ran  atomic.Bool
	// outer is the hook this one runs inside of (composeHook): it is spent
	// with it.
	outer *hookState
}

// spent tells whether the hook, or one it runs inside of, already ran.
func (h *hookState) spent() bool {
	for ; h != nil; h = h.outer {
		if h.ran.Load() {
			return true
		}
	}
	return false
}

// markRan records that the hook, and those it runs inside of, ran.
func (h *hookState) markRan() {
	for ; h != nil; h = h.outer {
		h.ran.Store(true)
	}
}

// WithCommitHook returns a context under which the next writing operation
// runs h before it commits. Operations that never write ignore it. A second
// commit under the same context fails (errHookSpent) rather than run h
// again: an operation that writes more than once must say which of its
// commits answers the request.
func WithCommitHook(ctx context.Context, h CommitHook) context.Context {
	return context.WithValue(ctx, commitHookKey{}, &hookState{hook: h})
}

// errHookSpent is a programming error: a second commit under a context
// whose CommitHook already ran in an earlier one.
var errHookSpent = errors.New("payments: a second commit under a CommitHook that already ran (an operation must record its answer in one commit)")

// read runs fn in a store transaction and returns its value. For
// operations that only look.
func read[T any](ctx context.Context, s *Service, fn func(tx store.Tx) (T, error)) (T, error) {
	var out T
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		var err error
		out, err = fn(tx)
		return err
	})
	return out, err
}

// commit runs fn, an operation's effect, in one store transaction, then the
// context's CommitHook (if any) with fn's result, and commits. turn, when
// not empty, names the hot row fn works on (a wallet): the transaction then
// waits for that row's turn (store.Store.TxFor). fn may run more than once
// when the store retries a serialization failure; it must not have effects
// outside tx.
func commit[T any](ctx context.Context, s *Service, turn string, fn func(tx store.Tx) (T, error)) (T, error) {
	state, _ := ctx.Value(commitHookKey{}).(*hookState)
	var out T
	if state.spent() {
		return out, errHookSpent
	}
	err := s.tx(ctx, turn, func(tx store.Tx) error {
		var err error
		if out, err = fn(tx); err != nil {
			return err
		}
		if state != nil {
			return state.hook(ctx, tx, out)
		}
		return nil
	})
	if err == nil {
		state.markRan()
	}
	return out, err
}

// tx runs fn in a store transaction, after waiting for turn's turn when
// turn is not empty (see store.Store.TxFor).
func (s *Service) tx(ctx context.Context, turn string, fn func(store.Tx) error) error {
	if turn == "" {
		return s.store.Tx(ctx, fn)
	}
	return s.store.TxFor(ctx, turn, fn)
}

// listPage reads one page of a list operation and renders its items with
// render, the store's paging (hasMore, nextCursor, totalCount) carried
// over.
func listPage[S, T any](ctx context.Context, s *Service, list func(store.Tx) (store.Page[S], error), render func(*S) T) (wire.List[T], error) {
	return listPageTx(ctx, s, list, func(_ store.Tx, v *S) (T, error) { return render(v), nil })
}

// listPageTx is listPage for items whose rendering reads more of the store
// (an agent's usage, an event's attempts) in the page's transaction.
func listPageTx[S, T any](ctx context.Context, s *Service, list func(store.Tx) (store.Page[S], error), render func(store.Tx, *S) (T, error)) (wire.List[T], error) {
	return read(ctx, s, func(tx store.Tx) (wire.List[T], error) {
		page, err := list(tx)
		if err != nil {
			return wire.List[T]{}, err
		}
		return listOf(page, func(v *S) (T, error) { return render(tx, v) })
	})
}

// listOf renders a page of the store as the API's list, each item with
// render.
func listOf[S, T any](page store.Page[S], render func(*S) (T, error)) (wire.List[T], error) {
	out := wire.List[T]{Data: make([]T, 0, len(page.Items)), HasMore: page.HasMore,
		NextCursor: page.NextCursor, TotalCount: &page.TotalCount}
	for i := range page.Items {
		v, err := render(&page.Items[i])
		if err != nil {
			return wire.List[T]{}, err
		}
		out.Data = append(out.Data, v)
	}
	return out, nil
}
