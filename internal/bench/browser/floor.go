package browser

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// floorModule is the reference module of the module's load (see package
// floor), built for this run exactly as the wallet module is.
type floorModule struct {
	raw, gzip, brotli []byte
}

// buildFloor builds package floor with wasm/build.sh, the wallet module's
// own build (toolchain settings, data segments joined, gzip and brotli),
// into tmp. The module measured and the floor must come from one
// toolchain: if the wasm_exec.js of this build differs from the one served
// with the wallet module (wasmExec), the wallet module is older than the
// toolchain and the run stops, saying to run make wasm.
func buildFloor(ctx context.Context, root, tmp, wasmExec string) (*floorModule, error) {
	out := filepath.Join(tmp, "floor.wasm")
	cmd := exec.CommandContext(ctx, "sh", filepath.Join(root, "wasm", "build.sh"), "./internal/bench/browser/floor", out)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build the floor module (wasm/build.sh): %v: %s", err, b)
	}
	served, err := os.ReadFile(wasmExec)
	if err != nil {
		return nil, err
	}
	built, err := os.ReadFile(filepath.Join(tmp, "wasm_exec.js"))
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(served, built) {
		return nil, fmt.Errorf("%s is not the wasm_exec.js of this Go toolchain: the wallet module was built by another one; run make wasm", wasmExec)
	}
	var f floorModule
	for _, x := range []struct {
		dst  *[]byte
		name string
	}{{&f.raw, out}, {&f.gzip, out + ".gz"}, {&f.brotli, out + ".br"}} {
		if *x.dst, err = os.ReadFile(x.name); err != nil {
			return nil, err
		}
	}
	return &f, nil
}
