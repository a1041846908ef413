package sqlstore

import (
	"database/sql"
	"fmt"
	"time"
)

// The helpers below are the only places that know how Go values map to
// columns; the dialect decides the representation of times, everything else
// is the same on both back ends.

// timeCol scans a time column stored either as INTEGER microseconds
// (SQLite) or timestamptz (PostgreSQL). NULL becomes the zero time; other
// values come back in UTC, so that a value read back is == to one stored
// after t.UTC().Truncate(time.Microsecond).
type timeCol struct{ dst *time.Time }

func (c timeCol) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*c.dst = time.Time{}
	case int64:
		*c.dst = time.UnixMicro(v).UTC()
	case time.Time:
		*c.dst = v.UTC()
	default:
		return fmt.Errorf("time column holds %T", v)
	}
	return nil
}

// bytesCol scans a byte-string column; NULL and empty both become nil, so
// callers can compare with == nil without caring what the driver returned.
type bytesCol struct{ dst *[]byte }

func (c bytesCol) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*c.dst = nil
	case []byte:
		if len(v) == 0 {
			*c.dst = nil
		} else {
			*c.dst = append([]byte(nil), v...) // the driver may reuse v
		}
	case string:
		if v == "" {
			*c.dst = nil
		} else {
			*c.dst = []byte(v)
		}
	default:
		return fmt.Errorf("byte column holds %T", v)
	}
	return nil
}

// optStringCol scans a nullable text column; NULL becomes "".
type optStringCol struct{ dst *string }

func (c optStringCol) Scan(v any) error {
	var ns sql.NullString
	if err := ns.Scan(v); err != nil {
		return err
	}
	*c.dst = ns.String
	return nil
}

// optString is the argument for a nullable text column: "" is stored as NULL
// (an internal account without customer; a customer without platform id), so
// that foreign keys and unique indexes do not apply to it.
func optString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// blob is the argument for a NOT NULL byte column: nil is stored as an empty
// value rather than NULL. Whether an empty value is acceptable is the
// service's decision, not a constraint violation.
func blob(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// optBlob is the argument for a nullable byte column: empty is stored as NULL.
func optBlob(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// exactBytesCol scans a nullable byte-string column that keeps nil and empty
// apart, for documents the service stores as given: NULL becomes nil, an
// empty value a non-nil empty slice.
type exactBytesCol struct{ dst *[]byte }

func (c exactBytesCol) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*c.dst = nil
	case []byte:
		*c.dst = append([]byte{}, v...) // never nil; the driver may reuse v
	case string:
		*c.dst = append([]byte{}, v...)
	default:
		return fmt.Errorf("byte column holds %T", v)
	}
	return nil
}

// exactBlob is the argument for a column read with exactBytesCol: nil is
// stored as NULL, an empty slice as an empty value.
func exactBlob(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}
