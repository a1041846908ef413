package atrest

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func mustBox(t *testing.T, key []byte) *Box {
	t.Helper()
	b, err := New(key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testKey(fill byte) []byte { return bytes.Repeat([]byte{fill}, KeySize) }

const label = "InternalAccount:019542f5-b3e7-7d02-8000-000000000001/mnemonic"

func TestRoundTrip(t *testing.T) {
	b := mustBox(t, testKey(1))
	for _, pt := range [][]byte{
		nil,
		[]byte("x"),
		[]byte("legal winner thank year wave sausage worth useful legal winner thank yellow"),
		bytes.Repeat([]byte{0xff}, 4096),
	} {
		sealed := b.Seal(pt, label)
		if len(sealed) != len(pt)+29 || sealed[0] != 0x01 {
			t.Fatalf("sealed %d bytes into %d, version %#x", len(pt), len(sealed), sealed[0])
		}
		got, err := b.Open(sealed, label)
		if err != nil || !bytes.Equal(got, pt) {
			t.Fatalf("Open = %q, %v; want %q", got, err, pt)
		}
		if again := b.Seal(pt, label); bytes.Equal(again, sealed) {
			t.Fatal("two seals of the same plaintext are equal")
		}
	}
}

// TestFormat opens a sealed value with crypto/cipher directly: the layout and
// the additional data are what the package documentation says.
func TestFormat(t *testing.T) {
	key := testKey(7)
	sealed := mustBox(t, key).Seal([]byte("secret"), "row/purpose")
	block, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(block)
	pt, err := gcm.Open(nil, sealed[1:13], sealed[13:], []byte("paywallet/atrest/v1\x00row/purpose"))
	if err != nil || string(pt) != "secret" {
		t.Fatalf("independent open = %q, %v", pt, err)
	}
}

func TestOpenFailures(t *testing.T) {
	b := mustBox(t, testKey(1))
	sealed := b.Seal([]byte("the mnemonic"), label)
	flip := func(i int) []byte {
		c := bytes.Clone(sealed)
		c[i] ^= 0x01
		return c
	}
	tests := []struct {
		name   string
		box    *Box
		sealed []byte
		label  string
		want   error
	}{
		{"wrong label", b, sealed, label + "x", ErrOpen},
		{"label of another row", b, sealed, "InternalAccount:019542f5-b3e7-7d02-8000-000000000002/mnemonic", ErrOpen},
		{"empty label", b, sealed, "", ErrOpen},
		{"wrong key", mustBox(t, testKey(2)), sealed, label, ErrOpen},
		{"tampered nonce", b, flip(1), label, ErrOpen},
		{"tampered ciphertext", b, flip(14), label, ErrOpen},
		{"tampered tag", b, flip(len(sealed) - 1), label, ErrOpen},
		{"truncated", b, sealed[:len(sealed)-1], label, ErrOpen},
		{"extended", b, append(bytes.Clone(sealed), 0), label, ErrOpen},
		{"version 0", b, append([]byte{0}, sealed[1:]...), label, ErrMalformed},
		{"version 2", b, append([]byte{2}, sealed[1:]...), label, ErrMalformed},
		{"too short", b, sealed[:28], label, ErrMalformed},
		{"empty", b, nil, label, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pt, err := tt.box.Open(tt.sealed, tt.label)
			if pt != nil || !errors.Is(err, tt.want) {
				t.Fatalf("Open = %q, %v; want %v", pt, err, tt.want)
			}
			var e *Error
			if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "atrest: ") {
				t.Fatalf("error %v is not an *Error", err)
			}
			if strings.Contains(err.Error(), "mnemonic") && !strings.Contains(tt.name, "label") {
				t.Fatalf("error %q leaks", err)
			}
		})
	}
	// The exact-zero-length plaintext boundary: 29 bytes is the minimum.
	empty := b.Seal(nil, label)
	if _, err := b.Open(empty[:28], label); !errors.Is(err, ErrMalformed) {
		t.Fatalf("28 bytes: %v", err)
	}
}

func TestNewKeyLength(t *testing.T) {
	for _, n := range []int{0, 16, 24, 31, 33, 64} {
		if b, err := New(make([]byte, n)); b != nil || !errors.Is(err, ErrKey) {
			t.Errorf("New(%d bytes) = %v, %v", n, b, err)
		}
	}
}

func TestParseKey(t *testing.T) {
	valid := strings.Repeat("0123456789abcdef", 4)
	tests := []struct {
		name, in string
		want     []byte // nil: ErrKey
	}{
		{"lower case", valid, bytes.Repeat([]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}, 4)},
		{"upper case", strings.ToUpper(valid), bytes.Repeat([]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}, 4)},
		{"zeros", strings.Repeat("0", 64), make([]byte, 32)},
		{"empty", "", nil},
		{"63 characters", valid[:63], nil},
		{"65 characters", valid + "0", nil},
		{"32 characters (AES-128)", valid[:32], nil},
		{"not hex", "g" + valid[1:], nil},
		{"trailing newline", valid[:63] + "\n", nil},
		{"leading space", " " + valid[1:], nil},
		{"0x prefix", "0x" + valid[2:], nil},
		{"base64", strings.Repeat("AAA=", 16), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseKey(tt.in)
			if tt.want == nil {
				if got != nil || !errors.Is(err, ErrKey) {
					t.Fatalf("ParseKey = %x, %v; want ErrKey", got, err)
				}
				if tt.in != "" && strings.Contains(err.Error(), tt.in) {
					t.Fatalf("error %q quotes the key", err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, tt.want) {
				t.Fatalf("ParseKey = %x, %v; want %x", got, err, tt.want)
			}
		})
	}
}

func TestLoadOrCreateKeyFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "keys")
	path := filepath.Join(dir, "atrest.key")
	key, err := LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(key) != KeySize || bytes.Equal(key, make([]byte, KeySize)) {
		t.Fatalf("key %x", key)
	}
	checkMode(t, dir, 0o700)
	checkMode(t, path, 0o600)
	content, err := os.ReadFile(path)
	if err != nil || string(content) != hex.EncodeToString(key)+"\n" {
		t.Fatalf("file holds %q, %v", content, err)
	}
	again, err := LoadOrCreateKeyFile(path)
	if err != nil || !bytes.Equal(again, key) {
		t.Fatalf("second load = %x, %v; want %x", again, err, key)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".atrest-key-*")); len(leftovers) != 0 {
		t.Fatalf("temporary files left behind: %q", leftovers)
	}
	other, err := LoadOrCreateKeyFile(filepath.Join(dir, "other.key"))
	if err != nil || bytes.Equal(other, key) {
		t.Fatalf("a second file got %x, %v", other, err)
	}
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Fatalf("%s has mode %o, want %o", path, got, want)
	}
}

func TestLoadKeyFileRefusals(t *testing.T) {
	valid := strings.Repeat("ab", 32)
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		detail  string // part of the error message
	}{
		{"group-readable", valid + "\n", 0o640, "accessible by group or others (mode 640)"},
		{"world-readable", valid + "\n", 0o604, "(mode 604)"},
		{"group-writable", valid + "\n", 0o620, "(mode 620)"},
		{"empty", "", 0o600, ": is empty"},
		{"short", valid[:62] + "\n", 0o600, "does not hold 64 hex characters"},
		{"not hex", strings.Repeat("zz", 32), 0o600, "does not hold 64 hex characters"},
		{"two keys", valid + "\n" + valid + "\n", 0o600, "does not hold 64 hex characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "k")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			key, err := LoadOrCreateKeyFile(path)
			if key != nil || !errors.Is(err, ErrKeyFile) || !strings.Contains(err.Error(), tt.detail) {
				t.Fatalf("LoadOrCreateKeyFile = %x, %v; want ErrKeyFile with %q", key, err, tt.detail)
			}
			if strings.Contains(err.Error(), valid[:8]) {
				t.Fatalf("error %q quotes the key", err)
			}
			// The file is left as it was: never overwritten.
			if b, _ := os.ReadFile(path); string(b) != tt.content {
				t.Fatal("the file was changed")
			}
		})
	}
	// Surrounding white space is fine (an editor's newline, CRLF).
	path := filepath.Join(t.TempDir(), "k")
	if err := os.WriteFile(path, []byte("  "+strings.ToUpper(valid)+"\r\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	if key, err := LoadOrCreateKeyFile(path); err != nil || hex.EncodeToString(key) != valid {
		t.Fatalf("LoadOrCreateKeyFile = %x, %v", key, err)
	}
	// A directory is not a key file.
	if _, err := LoadOrCreateKeyFile(t.TempDir()); !errors.Is(err, ErrKeyFile) {
		t.Fatalf("directory: %v", err)
	}
}

// TestKeyFileRace starts several loaders on one fresh path at once, many
// times over: they must all return the key that ends up in the file.
func TestKeyFileRace(t *testing.T) {
	for round := range 25 {
		path := filepath.Join(t.TempDir(), "fresh", "atrest.key")
		const n = 2 + 4
		keys := make([][]byte, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-start
				keys[i], errs[i] = LoadOrCreateKeyFile(path)
			})
		}
		close(start)
		wg.Wait()
		onDisk, err := LoadOrCreateKeyFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if errs[i] != nil || !bytes.Equal(keys[i], onDisk) {
				t.Fatalf("round %d, loader %d: %x, %v; file holds %x", round, i, keys[i], errs[i], onDisk)
			}
		}
	}
}

// TestKeyFileRaceWithoutLinks runs the race on a file system without hard
// links, where path itself is created with O_EXCL and a loser may find the
// winner's file still empty.
func TestKeyFileRaceWithoutLinks(t *testing.T) {
	link = func(oldname, newname string) error {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EPERM}
	}
	defer func() { link = os.Link }()
	TestKeyFileRace(t)

	// A loser that finds an empty file waits for the winner's write.
	path := filepath.Join(t.TempDir(), "atrest.key")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if won, err := createExclusive(path, []byte(strings.Repeat("00", 32)+"\n")); won || err != nil {
		t.Fatalf("createExclusive over an existing file = %v, %v", won, err)
	}
	want := testKey(0x42)
	go func() {
		time.Sleep(100 * time.Millisecond)
		if err := writeAndSync(f, []byte(hex.EncodeToString(want)+"\n")); err != nil {
			t.Error(err)
		}
	}()
	key, err := waitForKeyFile(path)
	if err != nil || !bytes.Equal(key, want) {
		t.Fatalf("waitForKeyFile = %x, %v", key, err)
	}
	// A file that stays empty is reported as such, after the wait.
	empty := filepath.Join(t.TempDir(), "empty.key")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := waitForKeyFile(empty); !errors.Is(err, ErrKeyFile) || !strings.HasSuffix(err.Error(), ": is empty") {
		t.Fatalf("empty file: %v", err)
	}
}
