package soak

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// instance is one paymentsd process the soak starts, kills and starts
// again. It keeps its address across restarts, so requests in flight and
// retries name the same place a load balancer would.
type instance struct {
	name string
	bin  string
	args []string // without --listen
	env  []string
	logs string // file the process's output is appended to

	mu   sync.Mutex
	addr string
	cmd  *exec.Cmd
	exit chan struct{} // closed when cmd has exited
}

// base is the URL of the instance's API root (without the version path).
func (in *instance) base() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return "http://" + in.addr
}

// start runs the process and waits until it answers HTTP (its /healthz,
// whatever the status: the database may be down). It fails when the
// process exits first, e.g. because the database is unreachable at start.
func (in *instance) start(ctx context.Context) error {
	in.mu.Lock()
	if in.addr == "" {
		port, err := freePort()
		if err != nil {
			in.mu.Unlock()
			return err
		}
		in.addr = "127.0.0.1:" + strconv.Itoa(port)
	}
	out, err := os.OpenFile(in.logs, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		in.mu.Unlock()
		return err
	}
	fmt.Fprintf(out, "--- soak: start %s at %s ---\n", in.name, time.Now().Format(time.StampMilli))
	cmd := exec.Command(in.bin, append([]string{"--listen", in.addr}, in.args...)...)
	cmd.Env = in.env
	cmd.Stdout, cmd.Stderr = out, out
	// A test binary that dies takes its instances with it. The kernel
	// sends Pdeathsig when the thread that started the child ends, and Go
	// ends a thread whose goroutine exits locked to it (pgtest's does when
	// PostgreSQL stops): so the child is started from a locked thread that
	// lives as long as the child, as pgtest starts PostgreSQL. Without it,
	// a crash of the database now and then killed an instance that had
	// been started from the thread pgtest's restart later locked.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	exit := make(chan struct{})
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			runtime.UnlockOSThread()
			started <- err
			return
		}
		started <- nil
		cmd.Wait() //nolint:errcheck // the status goes to the log
		fmt.Fprintf(out, "--- soak: %s exited at %s: %s ---\n", in.name, time.Now().Format(time.StampMilli), cmd.ProcessState)
		out.Close()
		close(exit)
	}()
	if err := <-started; err != nil {
		out.Close()
		in.mu.Unlock()
		return err
	}
	in.cmd, in.exit = cmd, exit
	addr := in.addr
	in.mu.Unlock()

	hc := &http.Client{Timeout: time.Second}
	for {
		resp, err := hc.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-exit:
			return fmt.Errorf("%s exited during start (%s)", in.name, cmd.ProcessState)
		case <-ctx.Done():
			in.kill()
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// kill ends the process with SIGKILL, as a machine that loses power or an
// OOM killer would, and waits until it is gone.
func (in *instance) kill() {
	in.signal(syscall.SIGKILL)
}

// stop asks the process to shut down (SIGTERM) and waits; it is killed if
// it takes too long.
func (in *instance) stop() {
	in.mu.Lock()
	exit := in.exit
	in.mu.Unlock()
	in.signal(syscall.SIGTERM)
	if exit == nil {
		return
	}
	select {
	case <-exit:
	case <-time.After(15 * time.Second):
		in.kill()
	}
}

func (in *instance) signal(sig syscall.Signal) {
	in.mu.Lock()
	cmd, exit := in.cmd, in.exit
	in.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	if sig == syscall.SIGKILL {
		<-exit
	}
}

// running reports whether the process is alive.
func (in *instance) running() bool {
	in.mu.Lock()
	exit := in.exit
	in.mu.Unlock()
	if exit == nil {
		return false
	}
	select {
	case <-exit:
		return false
	default:
		return true
	}
}

// restart starts the process again after a kill, retrying while the start
// fails (the database may be down just then) until ctx ends.
func (in *instance) restart(ctx context.Context) error {
	for {
		err := in.start(ctx)
		if err == nil || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
