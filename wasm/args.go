//go:build js && wasm

package main

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"syscall/js"
)

// Upper bounds on string arguments, in UTF-8 bytes. They are far above
// anything legitimate and only stop a page from handing the module
// megabytes to hex-decode or hash.
const (
	maxPayload = 1 << 20 // stamp payloads (payloadToSign)
	maxBundle  = 64 << 10
	maxKeyHex  = 130
	maxOTPCode = 64
)

// checkCount rejects a call whose argument count differs from the number of
// names, naming the expected arguments.
func checkCount(args []js.Value, names ...string) error {
	if len(args) == len(names) {
		return nil
	}
	var b strings.Builder
	b.WriteString("expected ")
	b.WriteString(strconv.Itoa(len(names)))
	if len(names) == 1 {
		b.WriteString(" argument")
	} else {
		b.WriteString(" arguments")
	}
	if len(names) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(names, ", "))
		b.WriteString(")")
	}
	b.WriteString(", got ")
	b.WriteString(strconv.Itoa(len(args)))
	return errors.New(b.String())
}

// stringArg returns v as a Go string if it is a JavaScript string of at most
// max UTF-8 bytes; nonEmpty also refuses the empty string.
func stringArg(v js.Value, name string, max int, nonEmpty bool) (string, error) {
	if v.Type() != js.TypeString {
		return "", errors.New(name + " must be a string, got " + v.Type().String())
	}
	// A string has at least as many UTF-8 bytes as UTF-16 code units, so
	// this refuses a huge string before copying it into wasm memory.
	// (Value.Length and Value.Get panic on primitives; Object(s) wraps.)
	if objectConstructor.Invoke(v).Get("length").Int() > max {
		return "", tooLong(name, max)
	}
	s := v.String()
	switch {
	case nonEmpty && s == "":
		return "", errors.New(name + " must not be empty")
	case len(s) > max:
		return "", tooLong(name, max)
	}
	return s, nil
}

func tooLong(name string, max int) error {
	return errors.New(name + " is longer than " + strconv.Itoa(max) + " bytes")
}

// handleArg returns v as a key handle string.
func handleArg(v js.Value) (string, error) {
	if v.Type() != js.TypeString {
		return "", errors.New("handle must be a string, got " + v.Type().String())
	}
	if h, ok := recentHandles.lookup(v); ok {
		return h, nil
	}
	h := v.String()
	if !validHandle(h) {
		return "", errBadHandle
	}
	recentHandles.remember(v, h)
	return h, nil
}

// recentHandles remembers the last few handle strings the page passed in.
// Copying a JavaScript string into Go is one of the dearest steps of a
// call (it is encoded to UTF-8 and copied through the boundary); a page
// stamps with the same handle again and again, and syscall/js gives equal
// strings the same reference while one is held, so a held string compared
// with Value.Equal, which does not cross into JavaScript, finds it again.
var recentHandles handleCache

type handleCache struct {
	mu   sync.Mutex
	vals [8]js.Value
	strs [8]string
	next int
}

func (c *handleCache) lookup(v js.Value) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.vals {
		if c.strs[i] != "" && c.vals[i].Equal(v) {
			return c.strs[i], true
		}
	}
	return "", false
}

func (c *handleCache) remember(v js.Value, h string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.vals[c.next], c.strs[c.next] = v, h
	c.next = (c.next + 1) % len(c.vals)
}

// validOTPCode reports whether code is 1 to maxOTPCode printable ASCII
// characters other than space. The page trims what the user typed; the
// module refuses anything that could not be a code rather than guessing.
func validOTPCode(code string) bool {
	if code == "" || len(code) > maxOTPCode {
		return false
	}
	for i := 0; i < len(code); i++ {
		if c := code[i]; c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

// cryptoReason turns a walletcrypto error into the reason part of a
// rejection, without the package prefix.
func cryptoReason(err error) string {
	return strings.TrimPrefix(err.Error(), "walletcrypto: ")
}
