// Package pgtest runs tests against a throwaway PostgreSQL cluster started
// from the machine's own PostgreSQL binaries (initdb, pg_ctl, postgres).
//
// A test binary gets at most one cluster: it is started the first time a test
// asks for it, listens only on 127.0.0.1 with trust authentication, runs
// without fsync, and is stopped (pg_ctl stop -m immediate) and deleted when
// the test binary ends. Each test gets its own fresh database, dropped when
// the test ends, so tests never see each other's rows and may run in
// parallel.
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		url := pgtest.Start(t).NewDatabase(t) // postgres://…/t3_testsomething
//		…
//	}
//
// The binaries are looked up in $PAYWALLET_PG_BINDIR, then next to initdb on
// PATH, then in /usr/lib/postgresql/*/bin (newest version first). When they
// are missing the test fails, unless PAYWALLET_SKIP_POSTGRES=1, in which case
// it is skipped.
//
// PostgreSQL refuses to run as root. When the tests run as root, the cluster
// runs as the unprivileged "postgres" user, in a temporary directory owned by
// that user below a parent it can traverse.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// SkipEnv is the environment variable that turns missing PostgreSQL
// binaries from a test failure into a skip.
const SkipEnv = "PAYWALLET_SKIP_POSTGRES"

// BinDirEnv names a directory holding initdb, pg_ctl and postgres, taking
// precedence over PATH and /usr/lib/postgresql.
const BinDirEnv = "PAYWALLET_PG_BINDIR"

// Cluster is a running throwaway PostgreSQL cluster.
type Cluster struct {
	root    string // temporary directory holding everything below
	dataDir string
	port    int
	binDir  string
	cred    *syscall.Credential // nil: run as the current user
	env     []string

	cmd    *exec.Cmd
	exited chan struct{} // closed when the postmaster has exited

	mu    sync.Mutex // guards admin, seq and down
	admin *pgx.Conn  // to database "postgres", for CREATE/DROP DATABASE
	seq   int
	down  bool // crashed (Crash) and not restarted yet

	createSuffix string // options for CREATE DATABASE
}

var (
	mainRunning atomic.Bool
	once        sync.Once
	shared      *Cluster
	startErr    error
)

// errNoBinaries marks the one start failure that PAYWALLET_SKIP_POSTGRES=1
// turns into a skip.
var errNoBinaries = errors.New("pgtest: PostgreSQL server binaries (initdb, pg_ctl, postgres) not found")

// Main runs the tests and exits, stopping the cluster if a test started it.
// Call it from TestMain.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run runs the tests, stops the cluster if a test started it, and returns
// the exit code, for a TestMain that has more to do:
//
//	func TestMain(m *testing.M) {
//		setup()
//		code := pgtest.Run(m)
//		teardown()
//		os.Exit(code)
//	}
func Run(m *testing.M) int {
	mainRunning.Store(true)
	defer mainRunning.Store(false)
	code := m.Run()
	if shared != nil {
		if err := shared.stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Start returns the test binary's cluster, starting it on first use. It
// fails tb if the cluster cannot be started (and on every later call too),
// or if TestMain does not use [Main] or [Run]: without them nothing would
// stop the cluster.
func Start(tb testing.TB) *Cluster {
	tb.Helper()
	if !mainRunning.Load() {
		tb.Fatal("pgtest: TestMain must call pgtest.Main(m) (or pgtest.Run) so that the cluster is stopped when the tests end")
	}
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		shared, startErr = start(ctx)
	})
	if startErr != nil {
		if errors.Is(startErr, errNoBinaries) && os.Getenv(SkipEnv) == "1" {
			tb.Skipf("%v; skipping because %s=1", startErr, SkipEnv)
		}
		tb.Fatal(startErr)
	}
	return shared
}

// NewDatabase creates an empty database for tb and returns its URL,
// postgres://postgres@127.0.0.1:<port>/<name>?sslmode=disable. The database
// is dropped when tb ends, together with any connections still open to it.
func (c *Cluster) NewDatabase(tb testing.TB) string {
	tb.Helper()
	c.mu.Lock()
	c.seq++
	name := dbName(c.seq, tb.Name())
	c.mu.Unlock()
	if err := c.adminExec(`CREATE DATABASE ` + pgx.Identifier{name}.Sanitize() + c.createSuffix); err != nil {
		tb.Fatalf("pgtest: create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		if err := c.adminExec(`DROP DATABASE IF EXISTS ` + pgx.Identifier{name}.Sanitize() + ` WITH (FORCE)`); err != nil {
			tb.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return c.URL(name)
}

// Launch starts a cluster of its own for a program that is not a test
// (cmd/bench); the caller must [Cluster.Close] it. Tests use [Start].
func Launch(ctx context.Context) (*Cluster, error) { return start(ctx) }

// CreateDatabase creates an empty database named name (letters, digits and
// underscores) and returns its URL. Unlike [Cluster.NewDatabase] nothing
// drops it; it goes with the cluster.
func (c *Cluster) CreateDatabase(name string) (string, error) {
	if err := c.adminExec(`CREATE DATABASE ` + pgx.Identifier{name}.Sanitize() + c.createSuffix); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return c.URL(name), nil
}

// Close stops a cluster made by [Launch] and deletes its files.
func (c *Cluster) Close() error { return c.stop() }

// URL returns the URL of the named database of the cluster.
func (c *Cluster) URL(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, database)
}

func (c *Cluster) adminExec(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down {
		return errDown
	}
	_, err := c.admin.Exec(ctx, sql)
	return err
}

var errDown = errors.New("pgtest: the cluster is down (Crash without Restart)")

// Durable makes the commits of the database at url (one of this
// cluster's) survive a [Cluster.Crash] once acknowledged: the cluster runs
// with synchronous_commit off, under which a commit is acknowledged before
// its write-ahead log is written, and an immediate shutdown loses the last
// fraction of a second of them. It turns synchronous_commit on for every
// later session of that database. (fsync stays off: a crash of the server
// is not one of the machine, whose page cache keeps what was written.)
func (c *Cluster) Durable(url string) error {
	name, err := databaseOf(url)
	if err != nil {
		return err
	}
	return c.adminExec(`ALTER DATABASE ` + pgx.Identifier{name}.Sanitize() + ` SET synchronous_commit = on`)
}

// databaseOf is the database name of a URL made by URL.
func databaseOf(u string) (string, error) {
	parsed, err := neturl.Parse(u)
	if err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	name := strings.TrimPrefix(parsed.Path, "/")
	if name == "" || strings.Contains(name, "/") {
		return "", fmt.Errorf("pgtest: %q names no database", u)
	}
	return name, nil
}

// Crash stops the cluster at once, as a power cut or kill -9 of the server
// would: pg_ctl stop -m immediate ends every server process without a
// checkpoint, and the next start recovers from the write-ahead log. Every
// connection breaks, and every database of the cluster is unreachable
// until [Cluster.Restart]: a test that crashes the binary's shared cluster
// must be the only one of its binary using it at the time (no t.Parallel
// beside it). See [Cluster.Durable] for the commits that survive.
func (c *Cluster) Crash(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down {
		return errDown
	}
	if c.admin != nil {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		c.admin.Close(cctx) //nolint:errcheck // the server goes away next
		cancel()
		c.admin = nil
	}
	c.down = true
	return c.stopNow(ctx)
}

// Restart starts the cluster again after [Cluster.Crash], on the same port
// and data directory, and returns once it accepts connections (after its
// crash recovery). URLs given out before stay valid.
func (c *Cluster) Restart(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.down {
		return errors.New("pgtest: Restart of a cluster that is running")
	}
	// The port is ours until another process binds it in the moment the
	// cluster was down; that is retried briefly, never answered with
	// another port (the URLs name this one).
	for attempt := 1; ; attempt++ {
		c.exited = make(chan struct{})
		err := c.launch(ctx, c.port, true)
		if err == nil {
			c.down = false
			return nil
		}
		if !errors.Is(err, errPortTaken) || attempt == 10 {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// dbName makes a unique, valid database name that still says which test it
// belongs to: t<seq>_<test name in lower case, other characters as _>.
func dbName(seq int, test string) string {
	var b strings.Builder
	b.WriteString("t" + strconv.Itoa(seq) + "_")
	for _, r := range strings.ToLower(test) {
		if b.Len() >= 63 { // NAMEDATALEN-1
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// start creates and starts a cluster.
func start(ctx context.Context) (*Cluster, error) {
	binDir, err := findBinDir()
	if err != nil {
		return nil, err
	}
	c := &Cluster{binDir: binDir, exited: make(chan struct{})}
	uid, gid := os.Getuid(), os.Getgid()
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("pgtest: running as root, PostgreSQL needs an unprivileged user to run as, and user \"postgres\" is missing: %w", err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	}
	parent, err := tempParent(uid, gid)
	if err != nil {
		return nil, err
	}
	c.root, err = os.MkdirTemp(parent, "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(c.root)
		}
	}()
	if c.cred != nil {
		if err := os.Chown(c.root, uid, gid); err != nil {
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	}
	c.dataDir = filepath.Join(c.root, "data")
	c.env = childEnv(c.root)

	out, err := c.command(ctx, "initdb", "-D", c.dataDir, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}

	// The port is picked by binding port 0 and closing the socket, so
	// another process may take it before postgres binds it; then postgres
	// exits and we try another.
	for attempt := 1; ; attempt++ {
		err = c.startPostmaster(ctx)
		if err == nil {
			break
		}
		if !errors.Is(err, errPortTaken) || attempt == 5 {
			return nil, err
		}
		c.exited = make(chan struct{})
	}
	ok = true
	return c, nil
}

var errPortTaken = errors.New("pgtest: port taken")

// startPostmaster runs postgres on a free port.
func (c *Cluster) startPostmaster(ctx context.Context) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	c.port = port
	return c.launch(ctx, port, false)
}

// launch runs postgres in the foreground as a child of this process, on
// port, and waits until it accepts connections. The server log is
// appended to after a crash (keep), started afresh otherwise.
func (c *Cluster) launch(ctx context.Context, port int, keep bool) error {
	logPath := filepath.Join(c.root, "postgres.log")
	mode := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if keep {
		mode = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	logFile, err := os.OpenFile(logPath, mode, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer logFile.Close() // the child has its own descriptor
	if keep {
		if _, err := logFile.WriteString(restartMark); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
	}
	c.cmd = c.command(context.Background(), "postgres", "-D", c.dataDir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+c.root,
		// Durability is pointless for a cluster deleted after the tests
		// (Durable turns synchronous_commit on where a test crashes it).
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "max_connections=200",
		"-c", "logging_collector=off",
	)
	c.cmd.Stdout = logFile
	c.cmd.Stderr = logFile
	// If this test binary dies without stopping the cluster (a panic, a
	// test timeout, ^C), the kernel sends the postmaster SIGQUIT, which is
	// PostgreSQL's immediate shutdown. Its own process group keeps ^C at
	// the terminal from reaching it before we stop it ourselves.
	c.cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	c.cmd.SysProcAttr.Setpgid = true

	// The kernel sends Pdeathsig when the *thread* that started the child
	// exits, so the child is started from a locked thread that lives exactly
	// as long as the postmaster: the goroutine waits for it and returns
	// (ending the thread) only once it has exited.
	started := make(chan error, 1)
	exited, cmd := c.exited, c.cmd
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			runtime.UnlockOSThread()
			started <- err
			close(exited)
			return
		}
		started <- nil
		cmd.Wait() //nolint:errcheck // exit status of an immediate shutdown is uninteresting
		close(exited)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}

	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", port)
	for {
		select {
		case <-exited:
			log := tail(logPath)
			if strings.Contains(lastStart(log), "could not bind") || strings.Contains(lastStart(log), "already in use") {
				return errPortTaken
			}
			return fmt.Errorf("pgtest: postgres exited during start-up:\n%s", log)
		case <-ctx.Done():
			c.kill()
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				c.cmd.Process.Kill() //nolint:errcheck
				<-exited
			}
			return fmt.Errorf("pgtest: postgres did not accept connections in time: %w\n%s", ctx.Err(), tail(logPath))
		default:
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(cctx, url)
		cancel()
		if err == nil {
			c.admin = conn
			// PostgreSQL 15 copies the template through the WAL by
			// default, which costs ~160 ms per database here; copying the
			// files (with fsync off) costs ~20 ms.
			var version int
			if err := conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&version); err == nil && version >= 150000 {
				c.createSuffix = ` STRATEGY = FILE_COPY`
			}
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop shuts the cluster down immediately and deletes its directory.
func (c *Cluster) stop() error {
	c.mu.Lock()
	if c.admin != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c.admin.Close(ctx) //nolint:errcheck // the server goes away next
		cancel()
		c.admin = nil
	}
	down := c.down
	c.mu.Unlock()
	if down {
		// Crashed and never restarted: nothing runs any more.
		if err := os.RemoveAll(c.root); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stopErr := c.stopNow(ctx)
	if err := os.RemoveAll(c.root); err != nil && stopErr == nil {
		stopErr = fmt.Errorf("pgtest: %w", err)
	}
	return stopErr
}

// stopNow shuts the postmaster down at once (pg_ctl stop -m immediate,
// a signal if that fails, SIGKILL if it lingers) and waits until it has
// exited.
func (c *Cluster) stopNow(ctx context.Context) error {
	out, err := c.command(ctx, "pg_ctl", "stop", "-D", c.dataDir, "-m", "immediate", "-w").CombinedOutput()
	if err != nil {
		c.kill()
		err = fmt.Errorf("pgtest: pg_ctl stop -m immediate: %v\n%s", err, out)
	}
	select {
	case <-c.exited:
	case <-time.After(15 * time.Second):
		c.cmd.Process.Kill() //nolint:errcheck
		<-c.exited
	}
	return err
}

// kill asks the postmaster for an immediate shutdown without pg_ctl.
func (c *Cluster) kill() {
	if c.cmd != nil && c.cmd.Process != nil {
		c.cmd.Process.Signal(syscall.SIGQUIT) //nolint:errcheck
	}
}

// command prepares one of the PostgreSQL programs to run as the cluster's
// user, in the cluster's directory (initdb resolves the current directory,
// which the postgres user may not be allowed to see otherwise).
func (c *Cluster) command(ctx context.Context, prog string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, prog), args...)
	cmd.Dir = c.root
	cmd.Env = c.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	return cmd
}

// childEnv is this process's environment without the variables that would
// point the PostgreSQL programs elsewhere (PG*) or change their language.
func childEnv(home string) []string {
	env := []string{"LC_ALL=C", "LANG=C", "HOME=" + home}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PG") || strings.HasPrefix(k, "LC_") || k == "LANG" || k == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// findBinDir returns a directory holding initdb, pg_ctl and postgres.
func findBinDir() (string, error) {
	has := func(dir string) bool {
		for _, p := range []string{"initdb", "pg_ctl", "postgres"} {
			if fi, err := os.Stat(filepath.Join(dir, p)); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
				return false
			}
		}
		return true
	}
	if dir := os.Getenv(BinDirEnv); dir != "" {
		if has(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("%w in %s=%s", errNoBinaries, BinDirEnv, dir)
	}
	// PATH often holds symbolic links (or Debian's wrappers elsewhere); the
	// real directory is where initdb looks for postgres.
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && has(filepath.Dir(real)) {
			return filepath.Dir(real), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { // newest major version first
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if has(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w on PATH or in /usr/lib/postgresql/*/bin; install the PostgreSQL server (Debian: apt-get install postgresql), set %s, or set %s=1 to skip these tests",
		errNoBinaries, BinDirEnv, SkipEnv)
}

// tempParent picks a directory for the cluster's temporary directory that
// uid/gid can reach: os.TempDir() if every directory above it lets that
// user through, /tmp otherwise.
func tempParent(uid, gid int) (string, error) {
	for _, d := range []string{os.TempDir(), "/tmp"} {
		if searchable(d, uid, gid) {
			return d, nil
		}
	}
	return "", fmt.Errorf("pgtest: neither %s nor /tmp can be reached by uid %d; set TMPDIR to a directory it can reach", os.TempDir(), uid)
}

// searchable reports whether uid/gid may traverse every directory from / to
// dir (supplementary groups are ignored, which errs on the safe side).
func searchable(dir string, uid, gid int) bool {
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return false
		}
		m := fi.Mode().Perm()
		switch {
		case uid == 0:
		case int(st.Uid) == uid:
			if m&0o100 == 0 {
				return false
			}
		case int(st.Gid) == gid:
			if m&0o010 == 0 {
				return false
			}
		default:
			if m&0o001 == 0 {
				return false
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: pick a port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// restartMark starts the part of the server log a restart writes (the log
// is kept across a crash).
const restartMark = "--- pgtest: restart after a crash ---\n"

// lastStart is the part of the server log written by its last start, where
// a bind failure of that start shows.
func lastStart(log string) string {
	if i := strings.LastIndex(log, restartMark); i >= 0 {
		return log[i:]
	}
	return log
}

// tail returns the end of the server log, for error messages.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
