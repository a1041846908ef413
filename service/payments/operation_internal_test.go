package payments

import (
	"context"
	"errors"
	"testing"

	"paywallet/service/store"
)

// TestThenRunsInOneCommit: a then (the Idempotency-Key record) runs in
// exactly one commit. A commit that fails does not spend it; a
// second commit after one that succeeded is refused instead of recording a
// second answer for the same request.
func TestThenRunsInOneCommit(t *testing.T) {
	svc := newTestService(t)
	var seen []any
	ctx := context.Background()
	fin := &then{run: func(_ context.Context, _ store.Tx, result any) error {
		seen = append(seen, result)
		return nil
	}}
	boom := errors.New("boom")
	if _, err := commit(ctx, svc, "", fin, func(store.Tx) (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("failing effect: %v", err)
	}
	if len(seen) != 0 {
		t.Fatalf("the hook ran for a failed effect: %v", seen)
	}
	if got, err := commit(ctx, svc, "", fin, func(store.Tx) (int, error) { return 1, nil }); err != nil || got != 1 {
		t.Fatalf("first commit: %d %v", got, err)
	}
	if _, err := commit(ctx, svc, "", fin, func(store.Tx) (int, error) { return 2, nil }); !errors.Is(err, errThenSpent) {
		t.Fatalf("second commit: %v, want errThenSpent", err)
	}
	if len(seen) != 1 || seen[0] != 1 {
		t.Fatalf("the hook saw %v, want [1]", seen)
	}
	// Without a then, commits are unlimited.
	for i := range 2 {
		if _, err := commit(ctx, svc, "", nil, func(store.Tx) (int, error) { return i, nil }); err != nil {
			t.Fatal(err)
		}
	}
}

// TestComposedThenSpendsTheOuter: a then composed inside another (an agent
// operation's record inside the Idempotency-Key record, andThen) is spent
// with it: after a commit with the composed one, neither it nor the outer
// one runs in another commit.
func TestComposedThenSpendsTheOuter(t *testing.T) {
	svc := newTestService(t)
	var outerSeen, innerSeen int
	ctx := context.Background()
	outer := &then{run: func(context.Context, store.Tx, any) error { outerSeen++; return nil }}
	inner := andThen(outer, func(_ context.Context, _ store.Tx, result any) (any, error) { innerSeen++; return result, nil })
	if _, err := commit(ctx, svc, "", inner, func(store.Tx) (int, error) { return 1, nil }); err != nil {
		t.Fatal(err)
	}
	for name, fin := range map[string]*then{"outer": outer, "composed": inner} {
		if _, err := commit(ctx, svc, "", fin, func(store.Tx) (int, error) { return 2, nil }); !errors.Is(err, errThenSpent) {
			t.Errorf("a second commit under the %s hook: %v, want errThenSpent", name, err)
		}
	}
	if outerSeen != 1 || innerSeen != 1 {
		t.Fatalf("hooks ran %d (outer) and %d (composed) times, want once each", outerSeen, innerSeen)
	}
}
