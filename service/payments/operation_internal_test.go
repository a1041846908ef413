package payments

import (
	"context"
	"errors"
	"testing"

	"paywallet/service/store"
)

// TestCommitHookRunsInOneCommit: a CommitHook (the Idempotency-Key record)
// runs in exactly one commit. A commit that fails does not spend it; a
// second commit after one that succeeded is refused instead of recording a
// second answer for the same request.
func TestCommitHookRunsInOneCommit(t *testing.T) {
	svc := newTestService(t)
	var seen []any
	ctx := WithCommitHook(context.Background(), func(_ context.Context, _ store.Tx, result any) error {
		seen = append(seen, result)
		return nil
	})
	boom := errors.New("boom")
	if _, err := commit(ctx, svc, "", func(store.Tx) (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("failing effect: %v", err)
	}
	if len(seen) != 0 {
		t.Fatalf("the hook ran for a failed effect: %v", seen)
	}
	if got, err := commit(ctx, svc, "", func(store.Tx) (int, error) { return 1, nil }); err != nil || got != 1 {
		t.Fatalf("first commit: %d %v", got, err)
	}
	if _, err := commit(ctx, svc, "", func(store.Tx) (int, error) { return 2, nil }); !errors.Is(err, errHookSpent) {
		t.Fatalf("second commit: %v, want errHookSpent", err)
	}
	if len(seen) != 1 || seen[0] != 1 {
		t.Fatalf("the hook saw %v, want [1]", seen)
	}
	// Without a hook, commits are unlimited.
	for i := range 2 {
		if _, err := commit(context.Background(), svc, "", func(store.Tx) (int, error) { return i, nil }); err != nil {
			t.Fatal(err)
		}
	}
}
