package payments

import (
	"context"

	"paywallet/service/store"
	"paywallet/shared/wire"
)

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

// commit runs fn, an operation's effect, in one store transaction, then
// fin (if not nil; see then) with fn's result, and commits. turn, when not
// empty, names the hot row fn works on (a wallet): the transaction then
// waits for that row's turn (store.Store.TxFor). fn may run more than once
// when the store retries a serialization failure; it must not have effects
// outside tx.
func commit[T any](ctx context.Context, s *Service, turn string, fin *then, fn func(tx store.Tx) (T, error)) (T, error) {
	var out T
	if fin.spent() {
		return out, errThenSpent
	}
	err := s.tx(ctx, turn, func(tx store.Tx) error {
		var err error
		if out, err = fn(tx); err != nil {
			return err
		}
		if fin != nil {
			return fin.run(ctx, tx, out)
		}
		return nil
	})
	if err == nil {
		fin.markRan()
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
