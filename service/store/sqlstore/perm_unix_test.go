//go:build unix

package sqlstore

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestSQLiteFilesPrivate: OpenSQLite makes the directories it creates 0700
// and the database with its -wal and -shm files 0600, whatever the umask;
// an existing database file left readable by others (as earlier versions
// made it) is made private too.
func TestSQLiteFilesPrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	root := t.TempDir()
	check := func(path string, want os.FileMode) {
		t.Helper()
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o, want %o", path, got, want)
		}
	}

	for _, name := range []string{filepath.Join(root, "a", "b", "wallet.db"), "file:" + filepath.Join(root, "c", "wallet.db") + "?cache=private"} {
		db, err := OpenSQLite(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(root, "c", "wallet.db")
		dirs := []string{filepath.Join(root, "c")}
		if name[0] == '/' {
			file = name
			dirs = []string{filepath.Join(root, "a"), filepath.Join(root, "a", "b")}
		}
		for _, d := range dirs {
			check(d, 0o700)
		}
		for _, f := range []string{file, file + "-wal", file + "-shm"} {
			check(f, 0o600)
		}
		db.Close()
	}

	// An existing database from before, in a directory that exists.
	info, err := os.Stat(root)
	if err != nil {
		t.Fatal(err)
	}
	legacy := filepath.Join(root, "legacy.db")
	db, err := OpenSQLite(context.Background(), legacy)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.Chmod(legacy, 0o644); err != nil {
		t.Fatal(err)
	}
	if db, err = OpenSQLite(context.Background(), legacy); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, f := range []string{legacy, legacy + "-wal", legacy + "-shm"} {
		check(f, 0o600)
	}
	check(root, info.Mode().Perm()) // an existing directory is left alone
}
