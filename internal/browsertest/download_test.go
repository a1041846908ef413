package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDownloadedWaitsForContent: a final name Chromium reserved empty, or
// one beside a download still being written, is not a download yet; the
// file is returned once it has content and nothing is pending.
func TestDownloadedWaitsForContent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "statement.csv")
	pending := filepath.Join(dir, "Unconfirmed 1.crdownload")
	for _, f := range []string{path, pending} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if b, err := Downloaded(short, dir, "statement.csv"); err == nil {
		t.Fatalf("an empty reserved file was taken as the download: %q", b)
	}
	if err := os.WriteFile(path, []byte("a,b\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	short2, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	if b, err := Downloaded(short2, dir, "statement.csv"); err == nil {
		t.Fatalf("a file beside a pending download was taken: %q", b)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = os.Remove(pending)
	}()
	wait, cancel3 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel3()
	b, err := Downloaded(wait, dir, "statement.csv")
	if err != nil || string(b) != "a,b\r\n" {
		t.Fatalf("got %q, %v", b, err)
	}
}
