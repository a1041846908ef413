//go:build unix

package serviceconfig

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// isolate points the per-user configuration directory at a fresh temporary
// one, so that no test writes keys into the real one.
func isolate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("HOME", filepath.Join(dir, "home"))
	return filepath.Join(dir, "config")
}

// build runs Build the way `make run` does, calls each of whileOpen, and
// closes the service; it returns the log.
func build(t *testing.T, o Options, whileOpen ...func()) (string, error) {
	t.Helper()
	o.Mode, o.DevMailbox, o.WebAuthnRPID = "sandbox", true, "localhost"
	var logs bytes.Buffer
	b, err := o.Build(context.Background(), slog.New(slog.NewTextHandler(&logs, nil)), "http://localhost:8080/dev/mailbox", true)
	if err == nil {
		for _, f := range whileOpen {
			f()
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return logs.String(), err
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

// keyFiles lists the files under dir ending in .key.
func keyFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".key") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestFreshStartLayout: on a fresh start with SQLite the database's new
// directory is 0700 and its files (-wal and -shm included) 0600 whatever the
// umask, and the at-rest key is made in the per-user configuration
// directory, not beside the database, where a copy of the data directory
// would carry it along. The log says where the key is and what a copy of
// which files gives away. Each database gets its own key; a restart finds it.
func TestFreshStartLayout(t *testing.T) {
	config := isolate(t)
	old := syscall.Umask(0)
	defer syscall.Umask(old)

	dataDir := filepath.Join(t.TempDir(), "data", "wallet")
	db := filepath.Join(dataDir, "wallet.db")
	logs, err := build(t, Options{Database: db}, func() {
		for _, p := range []string{dataDir, filepath.Dir(dataDir)} {
			if m := mode(t, p); m != 0o700 {
				t.Errorf("%s: mode %o, want 700", p, m)
			}
		}
		for _, p := range []string{db, db + "-wal", db + "-shm"} {
			if m := mode(t, p); m != 0o600 {
				t.Errorf("%s: mode %o, want 600", p, m)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := keyFiles(t, dataDir); len(got) != 0 {
		t.Errorf("key files beside the database: %v", got)
	}
	keys := keyFiles(t, config)
	if len(keys) != 1 || !strings.HasPrefix(keys[0], filepath.Join(config, "paywallet")+string(filepath.Separator)) {
		t.Fatalf("key files under %s: %v, want one under paywallet/", config, keys)
	}
	if m := mode(t, keys[0]); m != 0o600 {
		t.Errorf("%s: mode %o, want 600", keys[0], m)
	}
	if m := mode(t, filepath.Dir(keys[0])); m != 0o700 {
		t.Errorf("%s: mode %o, want 700", filepath.Dir(keys[0]), m)
	}
	if !strings.Contains(logs, keys[0]) || !strings.Contains(logs, db) {
		t.Errorf("the log does not name the key file %s and the database %s:\n%s", keys[0], db, logs)
	}
	key, _ := os.ReadFile(keys[0])

	// A second database gets a key of its own.
	other := filepath.Join(t.TempDir(), "wallet.db")
	if _, err := build(t, Options{Database: other}); err != nil {
		t.Fatal(err)
	}
	if got := keyFiles(t, config); len(got) != 2 {
		t.Errorf("after a second database: key files %v, want two", got)
	}

	// A restart uses the same key (the database now exists).
	if _, err := build(t, Options{Database: db}); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(keys[0]); !bytes.Equal(again, key) || len(keyFiles(t, config)) != 2 {
		t.Errorf("the restart changed the keys: %v", keyFiles(t, config))
	}
}

// TestOldLayoutKeepsWorking: an installation made before the key moved has
// wallet.key beside the database; that key keeps sealing its data (no new
// key is made), and the log recommends moving it.
func TestOldLayoutKeepsWorking(t *testing.T) {
	config := isolate(t)
	dataDir := t.TempDir()
	db := filepath.Join(dataDir, "wallet.db")
	oldKey := filepath.Join(dataDir, "wallet.key")
	// As the previous version started: the key file named explicitly is
	// what it made by default.
	if _, err := build(t, Options{Database: db, DataKeyFile: oldKey}); err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(oldKey)
	if err != nil {
		t.Fatal(err)
	}

	logs, err := build(t, Options{Database: db})
	if err != nil {
		t.Fatal(err)
	}
	if got := keyFiles(t, config); len(got) != 0 {
		t.Errorf("a new key was made for an existing installation: %v", got)
	}
	if again, _ := os.ReadFile(oldKey); !bytes.Equal(again, key) {
		t.Error("the old key file changed")
	}
	if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, oldKey) || !strings.Contains(logs, "move") {
		t.Errorf("no warning recommending to move %s:\n%s", oldKey, logs)
	}
}

// TestKeyFileFlag: --data-key-file still chooses the key file.
func TestKeyFileFlag(t *testing.T) {
	config := isolate(t)
	dataDir := t.TempDir()
	keyFile := filepath.Join(t.TempDir(), "elsewhere", "my.key")
	if _, err := build(t, Options{Database: filepath.Join(dataDir, "wallet.db"), DataKeyFile: keyFile}); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, keyFile); m != 0o600 {
		t.Errorf("%s: mode %o", keyFile, m)
	}
	if got := append(keyFiles(t, config), keyFiles(t, dataDir)...); len(got) != 0 {
		t.Errorf("other key files made: %v", got)
	}
}

// TestExistingDatabaseWithoutKey: a database that exists but whose key is
// nowhere to be found (a different user, a moved configuration directory)
// must not get a new key, which would not open what the old one sealed.
func TestExistingDatabaseWithoutKey(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "wallet.db")
	if _, err := build(t, Options{Database: db}); err != nil {
		t.Fatal(err)
	}
	isolate(t) // another user's configuration directory
	_, err := build(t, Options{Database: db})
	if err == nil || !strings.Contains(err.Error(), "--data-key-file") {
		t.Fatalf("err = %v, want a refusal naming --data-key-file", err)
	}
}
