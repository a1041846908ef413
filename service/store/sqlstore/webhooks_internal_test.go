package sqlstore

import (
	"path/filepath"
	"testing"

	"paywallet/service/store/pgtest"
)

// bothStores opens a fresh database of each kind.
var bothStores = []struct {
	name string
	open func(t *testing.T) (*DB, error)
}{
	{"sqlite", func(t *testing.T) (*DB, error) {
		return OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "webhooks.db"))
	}},
	{"postgres", func(t *testing.T) (*DB, error) {
		return OpenPostgres(t.Context(), pgtest.Start(t).NewDatabase(t))
	}},
}

