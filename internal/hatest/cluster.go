package hatest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Cluster is the HA cluster of scripts/pg-ha-cluster.sh, driven through
// the script so that the test and a person at a shell do the same things.
type Cluster struct {
	script, dir string
	// URL is the multi-host URL of the application database.
	URL  string
	logf func(format string, args ...any)
}

// Script is the path of scripts/pg-ha-cluster.sh in this repository.
func Script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "scripts", "pg-ha-cluster.sh")
}

// StartCluster creates and starts a cluster in dir (which must be
// reachable by the user "postgres" when run as root).
func StartCluster(ctx context.Context, dir string, logf func(string, ...any)) (*Cluster, error) {
	c := &Cluster{script: Script(), dir: dir, logf: logf}
	out, err := c.run(ctx, 5*time.Minute, "start")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	c.URL = lines[len(lines)-1]
	if !strings.HasPrefix(c.URL, "postgres://") {
		return nil, fmt.Errorf("pg-ha-cluster.sh start printed %q, want a URL", out)
	}
	return c, nil
}

func (c *Cluster) run(ctx context.Context, limit time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{c.script, args[0], c.dir}, args[1:]...)...)
	// The cluster goes when this process goes, even without its cleanup
	// (a test binary that times out).
	cmd.Env = append(os.Environ(), fmt.Sprintf("PG_HA_WATCH_PID=%d", os.Getpid()))
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		return string(out), fmt.Errorf("pg-ha-cluster.sh %s: %v: %s%s", strings.Join(args, " "), err, out, stderr)
	}
	return string(out), nil
}

// Stop stops every node and the monitor.
func (c *Cluster) Stop() error {
	_, err := c.run(context.Background(), 2*time.Minute, "stop")
	return err
}

// Primary is the name of the node the monitor has as primary ("" during
// a failover).
func (c *Cluster) Primary(ctx context.Context) string {
	out, err := c.run(ctx, 10*time.Second, "primary")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// Kill, Freeze, Thaw and Restart do to a node what the script's kill,
// freeze, thaw and run do.
func (c *Cluster) Kill(ctx context.Context, node string) error {
	_, err := c.run(ctx, 30*time.Second, "kill", node)
	return err
}

func (c *Cluster) Freeze(ctx context.Context, node string) error {
	_, err := c.run(ctx, 30*time.Second, "freeze", node)
	return err
}

func (c *Cluster) Thaw(ctx context.Context, node string) error {
	_, err := c.run(ctx, 30*time.Second, "thaw", node)
	return err
}

func (c *Cluster) Restart(ctx context.Context, node string) error {
	_, err := c.run(ctx, 30*time.Second, "run", node)
	return err
}

// Status is `pg_autoctl show state`, for the log.
func (c *Cluster) Status(ctx context.Context) string {
	out, err := c.run(ctx, 10*time.Second, "status")
	if err != nil {
		return err.Error()
	}
	return out
}

// WaitFor polls until the monitor reports a primary other than not (any
// primary when not is ""), and answers it.
func (c *Cluster) WaitFor(ctx context.Context, not string, limit time.Duration) (string, error) {
	deadline := time.Now().Add(limit)
	for {
		if p := c.Primary(ctx); p != "" && p != not {
			return p, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no new primary %s after losing %s:\n%s", limit, not, c.Status(ctx))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// WaitSettled polls until one node is primary and the two others are
// standbys again.
func (c *Cluster) WaitSettled(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if _, err := c.run(ctx, 10*time.Second, "settled"); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the cluster did not settle (a primary and two standbys) in %s:\n%s", limit, c.Status(ctx))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// NewDatabase creates a database for a round on the primary (it replicates
// to the standbys) and answers the multi-host URL of it.
func (c *Cluster) NewDatabase(ctx context.Context, name string) (string, error) {
	conn, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", err
	}
	i := strings.Index(c.URL, "/paywallet?")
	if i < 0 {
		return "", fmt.Errorf("unexpected cluster URL %s", c.URL)
	}
	// A standby may not have replayed the CREATE DATABASE yet (synchronous
	// replication waits for the standby's flush, not its replay), and a
	// connection that meets "database does not exist" on the first host
	// goes no further: wait until every node has it.
	hosts := strings.Split(strings.TrimPrefix(c.URL[:i], "postgres://postgres@"), ",")
	for _, h := range hosts {
		one := "postgres://postgres@" + h + "/" + name + "?sslmode=disable"
		for deadline := time.Now().Add(30 * time.Second); ; {
			conn, err := pgx.Connect(ctx, one)
			if err == nil {
				conn.Close(ctx)
				break
			}
			if time.Now().After(deadline) {
				return "", fmt.Errorf("database %s on %s: %w", name, h, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return c.URL[:i] + "/" + name + c.URL[i+len("/paywallet"):], nil
}

// Logs is the end of every node's and the monitor's pg_autoctl log.
func (c *Cluster) Logs(n int) string {
	var b strings.Builder
	for _, name := range []string{"monitor", "node1", "node2", "node3"} {
		data, _ := os.ReadFile(filepath.Join(c.dir, name+".log"))
		if len(data) > n {
			data = data[len(data)-n:]
		}
		fmt.Fprintf(&b, "--- %s.log ---\n%s\n", name, data)
	}
	return b.String()
}
