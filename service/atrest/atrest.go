// Package atrest encrypts the service's secrets before they reach the
// database, so that a copy of the database (a backup, a replica, a stolen
// file) does not give away wallet mnemonics. The key lives outside the
// database: in the environment, or in a key file that
// [LoadOrCreateKeyFile] creates on first start (by default under the
// per-user configuration directory, away from the database's directory, so
// that a copy of one does not carry the other).
//
// # Format
//
// [Box.Seal] writes
//
//	0x01 || nonce (12 random bytes) || AES-256-GCM ciphertext || tag (16 bytes)
//
// with additional data "paywallet/atrest/v1\x00" || label. The version byte
// leaves room for another algorithm or key later; [Box.Open] refuses any
// other. The caller passes a label naming the row and the purpose, such as
// "InternalAccount:<uuid>/mnemonic", so that a sealed value copied into
// another row, or into another column of the same row, does not open there.
//
// Random 96-bit nonces keep one key safe for about 2^32 seals (NIST SP
// 800-38D §8.3), far beyond one sealed secret per account.
package atrest

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// KeySize is the length of a key: AES-256.
const KeySize = 32

const (
	version   = 0x01
	nonceSize = 12
	tagSize   = 16
	aadPrefix = "paywallet/atrest/v1\x00"
)

// Kind says what went wrong; see [Error].
type Kind string

// The kinds of [Error]. Test for one with errors.Is(err, atrest.ErrXxx).
const (
	KindKey       Kind = "invalid key"
	KindMalformed Kind = "malformed sealed value"
	KindOpen      Kind = "cannot open sealed value"
	KindKeyFile   Kind = "key file"
)

// Error is the one error type of this package. Its Kind classifies it;
// Detail and Err say more and are for logs. Neither ever contains key
// material or plaintext.
type Error struct {
	Kind   Kind
	Detail string // what exactly, e.g. the key file's path and problem
	Err    error  // the underlying cause, e.g. from the file system; may be nil
}

func (e *Error) Error() string {
	s := "atrest: " + string(e.Kind)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrXxx) match every *Error of that kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Detail == "" && t.Err == nil && t.Kind == e.Kind
}

// Targets for errors.Is, one per kind.
var (
	// ErrKey: a key that is not 32 bytes, or not 64 hex characters.
	ErrKey = &Error{Kind: KindKey}
	// ErrMalformed: a sealed value that is too short or has an unknown version.
	ErrMalformed = &Error{Kind: KindMalformed}
	// ErrOpen: authentication failed: a wrong key, a wrong label, or a
	// value that was changed. GCM cannot tell these apart, and neither
	// can this package.
	ErrOpen = &Error{Kind: KindOpen}
	// ErrKeyFile: the key file cannot be read, created or trusted.
	ErrKeyFile = &Error{Kind: KindKeyFile}
)

// A Box seals and opens values with one key. It is safe for concurrent use.
type Box struct {
	aead cipher.AEAD // GCM that draws and prepends its own 12-byte nonce
}

// New returns a Box for a 32-byte key. The key is not retained: only its
// AES key schedule is.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, &Error{Kind: KindKey, Detail: "must be 32 bytes, got " + strconv.Itoa(len(key))}
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, &Error{Kind: KindKey, Err: err}
	}
	aead, err := cipher.NewGCMWithRandomNonce(block)
	if err != nil {
		return nil, &Error{Kind: KindKey, Err: err}
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext bound to label and returns the sealed value
// (29 bytes longer than plaintext). Sealing the same plaintext twice gives
// different values.
func (b *Box) Seal(plaintext []byte, label string) []byte {
	out := make([]byte, 1, 1+nonceSize+len(plaintext)+tagSize)
	out[0] = version
	return b.aead.Seal(out, nil, plaintext, additionalData(label))
}

// Open decrypts a value made by [Box.Seal] with the same key and label.
func (b *Box) Open(sealed []byte, label string) ([]byte, error) {
	if len(sealed) < 1+nonceSize+tagSize {
		return nil, &Error{Kind: KindMalformed, Detail: "too short"}
	}
	if sealed[0] != version {
		return nil, &Error{Kind: KindMalformed, Detail: "unknown version " + strconv.Itoa(int(sealed[0]))}
	}
	plaintext, err := b.aead.Open(nil, nil, sealed[1:], additionalData(label))
	if err != nil {
		return nil, &Error{Kind: KindOpen, Detail: "wrong key or label, or modified"}
	}
	return plaintext, nil
}

func additionalData(label string) []byte {
	return append([]byte(aadPrefix), label...)
}

// ParseKey decodes a key written as 64 hex characters (either case), the
// form of the key file and of an environment variable.
func ParseKey(s string) ([]byte, error) {
	if len(s) != 2*KeySize {
		return nil, &Error{Kind: KindKey, Detail: "must be 64 hex characters, got " + strconv.Itoa(len(s))}
	}
	key, err := hex.DecodeString(s)
	if err != nil {
		return nil, &Error{Kind: KindKey, Detail: "must be 64 hex characters"}
	}
	return key, nil
}

// LoadOrCreateKeyFile returns the key in the file at path, creating the file
// with a new random key if it does not exist.
//
// The file holds the key as 64 lower-case hex characters and a newline
// (surrounding white space is ignored when reading). It is created with
// mode 0600, in a directory created with mode 0700 if missing; a file whose
// mode lets group or others read or write it (mode&0077 != 0) is refused
// rather than used, since a key anyone can read protects nothing.
//
// Several processes may start at once against a fresh directory; they all
// end up with the same key. The new key is written to a temporary file made
// with O_EXCL in the same directory, and then hard-linked to path, which
// fails if path exists: the file appears complete or not at all, and a
// process that loses the race reads the winner's file. Where hard links are
// not supported, path itself is created with O_EXCL and written, and a loser
// that finds it still empty waits briefly for the winner's write.
func LoadOrCreateKeyFile(path string) ([]byte, error) {
	key, err := readKeyFile(path)
	switch {
	case errors.Is(err, errEmptyFile):
		return waitForKeyFile(path) // perhaps still being written by another process
	case !errors.Is(err, fs.ErrNotExist):
		return key, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, keyFileError(path, "cannot create its directory", err)
	}
	key = make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, keyFileError(path, "no randomness", err)
	}
	content := make([]byte, 2*KeySize+1)
	hex.Encode(content, key)
	content[2*KeySize] = '\n'
	won, err := createExclusive(path, content)
	clear(content)
	if err != nil {
		clear(key)
		return nil, err
	}
	if won {
		return key, nil
	}
	clear(key)
	return waitForKeyFile(path)
}

// waitForKeyFile reads the key file another process has just created. Without
// hard links that process may still be writing it, so an empty file is read
// again for up to a second; a file that stays empty (a crash between create
// and write) is then reported, never overwritten.
func waitForKeyFile(path string) ([]byte, error) {
	for range 50 {
		key, err := readKeyFile(path)
		if !errors.Is(err, errEmptyFile) {
			return key, err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return readKeyFile(path)
}

// errEmptyFile is the cause of the error for an empty key file.
var errEmptyFile = errors.New("is empty")

// link is os.Link; tests replace it to act as a file system without hard links.
var link = os.Link

// createExclusive creates path holding content unless it exists. It reports
// whether it created the file; false with a nil error means another process
// did.
func createExclusive(path string, content []byte) (bool, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".atrest-key-*") // O_EXCL, mode 0600
	if err != nil {
		return false, keyFileError(path, "cannot create a temporary file", err)
	}
	defer os.Remove(tmp.Name())
	if err := writeAndSync(tmp, content); err != nil {
		return false, keyFileError(path, "cannot write", err)
	}
	err = link(tmp.Name(), path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil
	}
	// No hard links here (some network and FUSE file systems): create
	// path itself exclusively.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, keyFileError(path, "cannot create", err)
	}
	if err := writeAndSync(f, content); err != nil {
		os.Remove(path)
		return false, keyFileError(path, "cannot write", err)
	}
	return true, nil
}

// writeAndSync writes content to f, flushes it to disk and closes f.
func writeAndSync(f *os.File, content []byte) error {
	_, err := f.Write(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// readKeyFile reads and checks an existing key file. A missing file gives an
// error wrapping fs.ErrNotExist.
func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, keyFileError(path, "cannot open", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, keyFileError(path, "cannot stat", err)
	}
	if !info.Mode().IsRegular() {
		return nil, keyFileError(path, "is not a regular file", nil)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return nil, keyFileError(path, "is accessible by group or others (mode "+
			strconv.FormatUint(uint64(perm), 8)+"); make it private with chmod 600", nil)
	}
	// A key file is 65 bytes; read a little more to notice garbage.
	buf := make([]byte, 256)
	defer clear(buf)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, keyFileError(path, "cannot read", err)
	}
	text := bytes.TrimSpace(buf[:n])
	if len(text) == 0 {
		return nil, keyFileError(path, "", errEmptyFile)
	}
	key := make([]byte, KeySize)
	if len(text) != 2*KeySize {
		return nil, keyFileError(path, "does not hold 64 hex characters", nil)
	}
	if _, err := hex.Decode(key, text); err != nil {
		return nil, keyFileError(path, "does not hold 64 hex characters", nil)
	}
	return key, nil
}

// keyFileError returns an ErrKeyFile error: "atrest: key file: <path>: <what>: <err>".
func keyFileError(path, what string, err error) error {
	if what != "" {
		path += ": " + what
	}
	return &Error{Kind: KindKeyFile, Detail: path, Err: err}
}
