package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"paywallet/service/store/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestNewDatabase(t *testing.T) {
	c := pgtest.Start(t)
	if pgtest.Start(t) != c {
		t.Fatal("Start returned a second cluster")
	}
	var names []string
	t.Run("Sub/Test With-Odd.Chars", func(t *testing.T) {
		u1, u2 := c.NewDatabase(t), c.NewDatabase(t)
		if u1 == u2 {
			t.Fatalf("two databases share the URL %s", u1)
		}
		for _, u := range []string{u1, u2} {
			conn := connect(t, u)
			var name string
			if err := conn.QueryRow(t.Context(), `SELECT current_database()`).Scan(&name); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
			// The database is empty and writable.
			if _, err := conn.Exec(t.Context(), `CREATE TABLE t (x int)`); err != nil {
				t.Fatal(err)
			}
		}
		// Left open on purpose: the drop must still succeed.
		connect(t, u1)
	})
	if len(names) != 2 {
		t.Fatal("subtest failed")
	}
	for _, n := range names {
		if len(n) > 63 || n[:1] != "t" {
			t.Errorf("database name %q", n)
		}
	}
	admin := connect(t, c.URL("postgres"))
	var left int
	if err := admin.QueryRow(t.Context(), `SELECT count(*) FROM pg_database WHERE datname = ANY($1)`, names).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d of the test's databases survived it", left)
	}
}

func TestServerSettings(t *testing.T) {
	conn := connect(t, pgtest.Start(t).URL("postgres"))
	for setting, want := range map[string]string{
		"fsync":              "off",
		"synchronous_commit": "off",
		"full_page_writes":   "off",
		"listen_addresses":   "127.0.0.1",
	} {
		var got string
		if err := conn.QueryRow(t.Context(), `SELECT current_setting($1)`, setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %q, want %q", setting, got, want)
		}
	}
}

func TestLaunch(t *testing.T) {
	c, err := pgtest.Launch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	url, err := c.CreateDatabase("bench_one")
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	conn := connect(t, url)
	var one int
	if err := conn.QueryRow(t.Context(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1: %d, %v", one, err)
	}
	conn.Close(t.Context())
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := pgx.Connect(t.Context(), url); err == nil {
		t.Fatal("cluster still answers after Close")
	}
}

// TestCrashRestart crashes the shared cluster in the middle of a test and
// starts it again: the URLs stay valid, what a durable database committed
// before the crash is there after it, a connection of before the crash is
// broken, and the cluster makes and drops databases as before.
func TestCrashRestart(t *testing.T) {
	c := pgtest.Start(t)
	url := c.NewDatabase(t)
	if err := c.Durable(url); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, url)
	var sync string
	if err := conn.QueryRow(t.Context(), `SELECT current_setting('synchronous_commit')`).Scan(&sync); err != nil || sync != "on" {
		t.Fatalf("synchronous_commit in a durable database: %q, %v", sync, err)
	}
	if _, err := conn.Exec(t.Context(), `CREATE TABLE acked (n int)`); err != nil {
		t.Fatal(err)
	}
	// Each insert is acknowledged before the next; the crash comes right
	// after the last acknowledgement, before any checkpoint.
	const rows = 200
	for i := range rows {
		if _, err := conn.Exec(t.Context(), `INSERT INTO acked VALUES ($1)`, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Crash(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.Crash(t.Context()); err == nil {
		t.Error("a second Crash of a crashed cluster succeeded")
	}
	if _, err := pgx.Connect(t.Context(), url+"&connect_timeout=1"); err == nil {
		t.Fatal("the crashed cluster accepts connections")
	}
	if err := c.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := conn.Ping(t.Context()); err == nil {
		t.Error("a connection of before the crash still works")
	}
	after := connect(t, url)
	var n int
	if err := after.QueryRow(t.Context(), `SELECT count(*) FROM acked`).Scan(&n); err != nil || n != rows {
		t.Fatalf("after the crash: %d of %d acknowledged rows, %v", n, rows, err)
	}
	// The admin connection came back: databases are made and dropped.
	connect(t, c.NewDatabase(t))
}
