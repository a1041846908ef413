// Package web holds the wallet's browser pages: plain HTML, CSS and ES
// modules with no build step, embedded into the BFF binary.
//
// The files under static/ are served at the site root: static/index.html is
// "/", static/js/app.js is "/js/app.js", static/wasm/wallet.wasm is
// "/wasm/wallet.wasm". The wasm module and wasm_exec.js are build outputs
// (`make wasm`); when they are absent the pages still load and report that
// the wallet module is missing.
package web

import (
	"embed"
	"io/fs"
)

// Static holds the directory static/ and the files in it, except those
// whose names start with "." or "_" (such as static/wasm/.gitignore), which
// are not part of the site. Most callers want [Files].
//
//go:embed static
var Static embed.FS

// Files returns the embedded pages rooted at static/, so that paths in it are
// the URL paths without their leading slash ("index.html", "js/app.js").
func Files() fs.FS {
	sub, err := fs.Sub(Static, "static")
	if err != nil { // cannot happen: "static" is a valid path
		panic("web: " + err.Error())
	}
	return sub
}
