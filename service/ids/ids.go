// Package ids makes the service's resource identifiers: `<Type>:<uuid>` where
// the uuid is a version 7 UUID (RFC 9562). Version 7 puts a millisecond
// timestamp in the high bits, so ids sort in creation order; the stores use
// that to give lists a stable order and a cursor that is simply the last id.
package ids

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"regexp"
	"sync"
	"time"
)

var (
	mu     sync.Mutex
	lastMS int64
	seq    uint16
)

// New returns a fresh id with the given type prefix, e.g. New("Customer").
// Ids made by one process are strictly increasing: within one millisecond a
// 12-bit counter (seeded randomly each millisecond) keeps them ordered.
func New(prefix string) string {
	return prefix + ":" + newV7(time.Now())
}

func newV7(now time.Time) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("ids: crypto/rand failed: " + err.Error())
	}
	ms := now.UnixMilli()
	mu.Lock()
	if ms <= lastMS {
		ms = lastMS
		seq++
		if seq > 0x0fff { // counter exhausted: borrow the next millisecond
			ms++
			seq = binary.BigEndian.Uint16(b[6:8]) & 0x07ff
		}
	} else {
		seq = binary.BigEndian.Uint16(b[6:8]) & 0x07ff // leave headroom to count up
	}
	lastMS = ms
	s := seq
	mu.Unlock()

	b[0] = byte(ms >> 40)
	b[1] = byte(ms >> 32)
	b[2] = byte(ms >> 24)
	b[3] = byte(ms >> 16)
	b[4] = byte(ms >> 8)
	b[5] = byte(ms)
	b[6] = 0x70 | byte(s>>8)&0x0f // version 7
	b[7] = byte(s)
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant

	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
	return string(out[:])
}

var idPattern = regexp.MustCompile(`^[A-Za-z]+:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Valid reports whether s is a well-formed id of the given type. The uuid
// part must be lower-case, as New makes it; other versions are accepted so
// that ids minted elsewhere (imports, tests) still parse.
func Valid(prefix, s string) bool {
	return len(s) == len(prefix)+37 && s[:len(prefix)+1] == prefix+":" && idPattern.MatchString(s)
}
