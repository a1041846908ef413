package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// migrationsFS holds one directory per dialect. Files are named
// NNNN_description.sql and applied in numeric order; a file, once released,
// is never edited (add a new one instead), because databases record only
// the version number.
//
//go:embed migrations
var migrationsFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads and orders the dialect's migrations, rejecting
// malformed names and duplicate versions so that a mistake fails every
// start, not just some.
func loadMigrations(d *dialect) ([]migration, error) {
	dir := path.Join("migrations", d.name)
	entries, err := fs.ReadDir(migrationsFS, dir)
	if err != nil {
		return nil, err
	}
	var ms []migration
	seen := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s/%s: name must look like 0001_description.sql", dir, name)
		}
		if other, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %s and %s in %s share version %d", other, name, dir, v)
		}
		seen[v] = name
		b, err := fs.ReadFile(migrationsFS, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// latestMigration is the version of the dialect's last migration.
func latestMigration(d *dialect) (int, error) {
	ms, err := loadMigrations(d)
	if err != nil || len(ms) == 0 {
		return 0, fmt.Errorf("store: migrations: %v", err)
	}
	return ms[len(ms)-1].version, nil
}

// migrate applies the migrations the database has not recorded yet, all in
// one transaction: a failure leaves the schema as it was.
//
// Several processes may start at once against one database. On PostgreSQL
// the transaction first takes an advisory lock, so the others wait and then
// find the migrations recorded; the transaction uses the default READ
// COMMITTED isolation precisely so that, after waiting, it sees what the
// winner committed. On SQLite the transaction begins IMMEDIATE, which has
// the same effect.
//
// Versions recorded in the database that this binary does not know are
// ignored, so an older binary keeps running during a rolling upgrade.
func migrate(ctx context.Context, db *sql.DB, d *dialect) error {
	ms, err := loadMigrations(d)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return applyMigrations(ctx, db, d, ms)
}

// applyMigrations is migrate with the migrations given: the tests of a
// migration make a database of the version before it with the ones that
// come first.
func applyMigrations(ctx context.Context, db *sql.DB, d *dialect, ms []migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if d.migrationLock != "" {
		if _, err := tx.ExecContext(ctx, d.migrationLock); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, d.migrationsTable); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return fmt.Errorf("migrate: %w", err)
		}
		applied[v] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	record := d.rebind(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`)
	for _, m := range ms {
		if applied[m.version] {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migrate: %s/%s: %w", d.name, m.name, err)
		}
		if after := afterMigration[m.version]; after != nil {
			if err := after(ctx, tx, d); err != nil {
				return fmt.Errorf("migrate: after %s/%s: %w", d.name, m.name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, record, m.version, m.name, d.timeArg(time.Now())); err != nil {
			return fmt.Errorf("migrate: record %s: %w", m.name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}
