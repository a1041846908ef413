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
