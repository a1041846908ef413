package browser

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// file is one input file of the benchmark.
type file struct {
	path string
	size int64
}

// benchFiles are the files the page loads.
type benchFiles struct {
	wasmRaw, wasmGzip, wasmBrotli, wasmExec file
	bundle                                  file
}

// locate finds the input files, defaulting to the module's own paths, and
// says which command makes a missing one. The bundle must also be newer than
// what it is built from, or the figures would be those of older code.
func locate(opt Options) (*benchFiles, error) {
	wasmDir, bundle := opt.WasmDir, opt.BundlePath
	if wasmDir == "" || bundle == "" {
		root, err := moduleRoot()
		if err != nil {
			return nil, err
		}
		if wasmDir == "" {
			wasmDir = filepath.Join(root, "web", "static", "wasm")
		}
		if bundle == "" {
			bundle = filepath.Join(root, "bench", "js", "dist", "turnkey.js")
		}
	}
	var f benchFiles
	for _, w := range []struct {
		dst  *file
		name string
	}{
		{&f.wasmRaw, "wallet.wasm"},
		{&f.wasmGzip, "wallet.wasm.gz"},
		{&f.wasmBrotli, "wallet.wasm.br"},
		{&f.wasmExec, "wasm_exec.js"},
	} {
		var err error
		if *w.dst, err = stat(filepath.Join(wasmDir, w.name)); err != nil {
			return nil, fmt.Errorf("browser bench: %w: build the wasm module with `make wasm`", err)
		}
	}
	var err error
	if f.bundle, err = stat(bundle); err != nil {
		return nil, fmt.Errorf("browser bench: %w: build the Turnkey bundle with `sh bench/js/build.sh`", err)
	}
	jsDir := filepath.Dir(filepath.Dir(bundle))
	built, _ := os.Stat(bundle)
	for _, src := range []string{"entry.js", "package-lock.json"} {
		if fi, err := os.Stat(filepath.Join(jsDir, src)); err == nil && fi.ModTime().After(built.ModTime()) {
			return nil, fmt.Errorf("browser bench: %s is older than %s: rebuild it with `sh bench/js/build.sh`", bundle, filepath.Join(jsDir, src))
		}
	}
	return &f, nil
}

func stat(path string) (file, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return file{}, fmt.Errorf("%s is missing", path)
	case err != nil:
		return file{}, err
	case fi.IsDir() || fi.Size() == 0:
		return file{}, fmt.Errorf("%s is not a non-empty file", path)
	}
	return file{path: path, size: fi.Size()}, nil
}

// moduleRoot walks up from the working directory to the paywallet module's
// go.mod, so that the default paths work from the repository root (cmd/bench)
// and from this package's directory (go test) alike.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			first, _, _ := strings.Cut(string(b), "\n")
			if strings.TrimSpace(first) == "module paywallet" {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("browser bench: not inside the paywallet module; set Options.WasmDir and Options.BundlePath")
		}
		dir = parent
	}
}

// installedPackages returns the version of every direct dependency of the
// npm project in jsDir as installed in its node_modules, or, for one that is
// not installed, as pinned in package-lock.json. A failure to read leaves a
// package out rather than failing the benchmark.
func installedPackages(jsDir string) map[string]string {
	var manifest struct {
		Dependencies    map[string]string `json:"dependencies"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if readJSON(filepath.Join(jsDir, "package.json"), &manifest) != nil {
		return nil
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	_ = readJSON(filepath.Join(jsDir, "package-lock.json"), &lock)
	out := map[string]string{}
	for _, deps := range []map[string]string{manifest.Dependencies, manifest.DevDependencies} {
		for name := range deps {
			var pkg struct {
				Version string `json:"version"`
			}
			if readJSON(filepath.Join(jsDir, "node_modules", filepath.FromSlash(name), "package.json"), &pkg) == nil && pkg.Version != "" {
				out[name] = pkg.Version
			} else if v := lock.Packages["node_modules/"+name].Version; v != "" {
				out[name] = v + " (package-lock.json; node_modules missing)"
			}
		}
	}
	return out
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
