package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// floorModule is the reference module of the cold load (see package
// floor), built for this run and compressed as the wallet module is.
type floorModule struct {
	raw, brotli []byte
}

// emptyModule is the smallest valid wasm module (magic and version): its
// cold load is what the browser and the harness take for any module at all.
var emptyModule = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// buildFloor builds package floor with wasm/build.sh's toolchain settings
// (GOOS=js GOARCH=wasm, -trimpath, stripped, the same GOEXPERIMENT) and
// compresses it with brotli -q 11, as the wallet module is served. Without
// the brotli command it fails and says so (make wasm installs it).
func buildFloor(ctx context.Context, root, tmp string) (*floorModule, error) {
	out := filepath.Join(tmp, "floor.wasm")
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	// A toolchain that no longer knows the experiment builds the wallet
	// module with its default collector (wasm/build.sh): so does the floor.
	env := append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	experiment := "nogreenteagc"
	if e := os.Getenv("GOEXPERIMENT"); e != "" {
		experiment = e + "," + experiment
	}
	check := exec.CommandContext(ctx, goCmd, "env", "GOEXPERIMENT")
	check.Env = append(env, "GOEXPERIMENT="+experiment)
	if check.Run() == nil {
		env = append(env, "GOEXPERIMENT="+experiment)
	}
	cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./internal/bench/browser/floor")
	cmd.Dir, cmd.Env = root, env
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build the floor module: %v: %s", err, b)
	}
	if _, err := exec.LookPath("brotli"); err != nil {
		return nil, fmt.Errorf("the brotli command is missing (make wasm installs it): %w", err)
	}
	if b, err := exec.CommandContext(ctx, "brotli", "-q", "11", "-f", "-o", out+".br", out).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("brotli the floor module: %v: %s", err, b)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	br, err := os.ReadFile(out + ".br")
	if err != nil {
		return nil, err
	}
	return &floorModule{raw: raw, brotli: br}, nil
}
