package bff

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strings"

	"paywallet/web"
)

// The pages (web/static/*.html) are plain HTML that name the site's files
// by their plain URLs, and the ES modules import each other by relative
// specifiers ("./api.js"), with no build step. What a browser caches
// forever must not change under its URL, so the BFF serves every file
// under a content-hashed URL as well (loadAssets) and, once at start-up,
// rewrites each page so that the browser asks for those:
//
//   - src and href attributes naming a file of the site get its hashed URL;
//   - an import map, inserted before the first stylesheet or script, maps
//     every module's plain URL to its hashed one, so that "./api.js",
//     imported from /js/app.<hash>.js, resolves to /js/api.<hash>.js (and a
//     module that changes changes its own URL only, not its importers');
//     the Worker's files go through it too (import.meta.resolve in
//     wallet.js);
//   - a modulepreload link for every module the page's module scripts
//     import statically, directly or not, and for the views' modules that
//     app.js imports by name from the table of views (viewModules), so the
//     browser fetches them all at once instead of discovering them one
//     level at a time;
//   - an element marked data-shown-when="<condition>" loses its hidden
//     attribute when the condition holds for this server ("sandbox",
//     "dev-mailbox"): the sandbox banner is there in the first paint rather
//     than pushing the page down once the configuration has been read.
//
// The import map is an inline script, which the CSP allows by its hash
// (the only one: every page has the same map).

// site holds what the pages are rewritten with.
type site struct {
	shown     map[string]bool     // the conditions of data-shown-when that hold
	hashed    map[string]string   // URL path -> content-hashed URL path
	imports   map[string][]string // URL path of a module -> URL paths it imports statically
	importMap string              // the <script type="importmap"> element
	mapHash   string              // its CSP source, "sha256-<base64>"
}

// staticImport matches an import or re-export declaration's module
// specifier at the start of a line: `import x from "./x.js"`, `import
// "./y.js"`, `import {\n a,\n} from "./z.js"`, `export { a } from "./a.js"`.
// A dynamic import("…") is not one: it loads when the code runs, and is
// not preloaded.
var staticImport = regexp.MustCompile(`(?m)^[ \t]*(?:import[ \t\n]*(?:[^;'"()]*?\bfrom[ \t\n]*)?|export[ \t\n][^;'"()]*?\bfrom[ \t\n]*)["']([^"']+)["']`)

func newSite(raw map[string][]byte, hashed map[string]string, shown map[string]bool) *site {
	s := &site{shown: shown, hashed: hashed, imports: map[string][]string{}}
	modules := map[string]string{}
	for p, b := range raw {
		if ext := path.Ext(p); ext != ".js" && ext != ".mjs" {
			continue
		}
		u := "/" + p
		if h, ok := hashed[u]; ok {
			modules[u] = h
		}
		for _, m := range staticImport.FindAllSubmatch(b, -1) {
			spec := string(m[1])
			switch {
			case strings.HasPrefix(spec, "/"):
				s.imports[u] = append(s.imports[u], path.Clean(spec))
			case strings.HasPrefix(spec, "./"), strings.HasPrefix(spec, "../"):
				s.imports[u] = append(s.imports[u], path.Join(path.Dir(u), spec))
			}
		}
	}
	// encoding/json sorts the keys and escapes '<', so the map is the same
	// on every start and cannot end its script element early.
	text, _ := json.Marshal(map[string]any{"imports": modules})
	sum := sha256.Sum256(text)
	s.mapHash = "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
	s.importMap = `<script type="importmap">` + string(text) + `</script>`
	return s
}

var (
	fileAttr     = regexp.MustCompile(`\b(src|href)="(/[^"?#]*)"`)
	moduleScript = regexp.MustCompile(`<script type="module" src="(/[^"]+)"></script>`)
	headAnchor   = regexp.MustCompile(`<link rel="stylesheet"|<script\b|</head>`)
	shownWhen    = regexp.MustCompile(`<[a-z]+\b[^>]*\bdata-shown-when="([a-z-]+)"[^>]*>`)
	// tagAttr is one attribute of a tag: its name, and its quoted value if
	// it has one (so that "hidden" inside a value is never taken for one).
	tagAttr = regexp.MustCompile(`\s+([^\s="'>/]+)(?:="[^"]*"|='[^']*')?`)
)

// page returns the page at p (a path in the site) as served: see the
// package comment above.
func (s *site) page(p string, body []byte) []byte {
	var roots []string
	for _, m := range moduleScript.FindAllSubmatch(body, -1) {
		roots = append(roots, string(m[1]))
	}
	out := fileAttr.ReplaceAllFunc(body, func(m []byte) []byte {
		sub := fileAttr.FindSubmatch(m)
		if h, ok := s.hashed[string(sub[2])]; ok {
			return []byte(string(sub[1]) + `="` + h + `"`)
		}
		return m
	})
	out = shownWhen.ReplaceAllFunc(out, func(tag []byte) []byte {
		if !s.shown[string(shownWhen.FindSubmatch(tag)[1])] {
			return tag
		}
		return tagAttr.ReplaceAllFunc(tag, func(attr []byte) []byte {
			if strings.EqualFold(string(tagAttr.FindSubmatch(attr)[1]), "hidden") {
				return nil
			}
			return attr
		})
	})
	at := headAnchor.FindIndex(out)
	if at == nil {
		return out
	}
	var head bytes.Buffer
	head.WriteString(s.importMap)
	preloads := s.closure(roots, nil)
	preloads = append(preloads, s.closure(append(slices.Clone(roots), preloads...), s.viewModules(roots))...)
	for _, u := range preloads {
		if h, ok := s.hashed[u]; ok {
			head.WriteString("\n  <link rel=\"modulepreload\" href=\"" + h + "\">")
		}
	}
	head.WriteString("\n  ")
	return slices.Concat(out[:at[0]], head.Bytes(), out[at[0]:])
}

// viewModules returns the modules of the views (js/views/<name>.js, one per
// entry of the table of views, web.Views) when the page runs app.js, which
// imports them by name from the table: dynamic imports the static closure
// cannot see, preloaded all the same because the page runs them at once.
func (s *site) viewModules(roots []string) []string {
	if !slices.Contains(roots, "/js/app.js") {
		return nil
	}
	var out []string
	for _, v := range web.Views() {
		out = append(out, "/js/views/"+v.Name+".js")
	}
	return out
}

// closure returns the modules roots import statically, directly or
// through others, roots excluded, in a stable order (breadth first); then
// the modules of also, each followed by what it imports that is not listed
// yet.
func (s *site) closure(roots, also []string) []string {
	seen := map[string]bool{}
	for _, r := range roots {
		seen[r] = true
	}
	var out []string
	for _, a := range also {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	queue := append(slices.Clone(roots), also...)
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, d := range s.imports[u] {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
				queue = append(queue, d)
			}
		}
	}
	return out
}
