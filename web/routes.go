package web

import (
	"encoding/json"
	"net/url"
	"strings"
)

// The wallet's views and their addresses. The pages route in the browser
// (js/router.js, History API); the server answers every address of a view
// with index.html so that a reload or a deep link lands on the view, and any
// other page address with index.html and status 404, which the pages show as
// their "not found" view.
//
// Both read one table, static/js/views.js: router.js imports it, and this
// file reads it from the embedded files at start-up, as the JSON array it
// exports.
// TestRoutesAgree loads router.js in Chromium and checks that the two read
// it alike. Signed out, every view's address shows the sign-in page first
// and the view after sign-in.

// ViewInfo is one entry of the table of views.
type ViewInfo struct {
	Name  string `json:"name"`  // "payment"; its module is js/views/<name>.js
	Path  string `json:"path"`  // its address pattern, "/activity/{id}": {id} is one path segment
	Title string `json:"title"` // the message key of its title
	Nav   string `json:"nav"`   // the name of the navigation entry it belongs to
	// Public views are shown signed out too, in place of the sign-in page
	// (the sign-out link of a security e-mail): they need no session.
	Public bool `json:"public,omitempty"`

	pattern []string // Path's segments, split once (mustViews)
}

// views is the table, in the order its patterns are tried.
var views = mustViews()

func mustViews() []ViewInfo {
	b, err := Static.ReadFile("static/js/views.js")
	if err != nil {
		panic("web: the table of views: " + err.Error())
	}
	// The module's comment, then "export default [ … ];": the array is JSON.
	_, table, _ := strings.Cut(string(b), "\nexport default ")
	var v []ViewInfo
	if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimSpace(table), ";")), &v); err != nil {
		panic("web: the table of views: " + err.Error())
	}
	for i := range v {
		v[i].pattern = segments(v[i].Path)
	}
	return v
}

// Views returns the table of views (a copy), in the order its patterns are
// tried.
func Views() []ViewInfo {
	return append([]ViewInfo(nil), views...)
}

// View returns the name of the view at the URL path p ("/activity/…"),
// and false when p is not the address of a view.
func View(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") || (strings.HasSuffix(p, "/") && p != "/") {
		return "", false
	}
	seg := segments(p)
	for i, s := range seg {
		u, err := url.PathUnescape(s)
		if err != nil || !idLike(u) {
			return "", false
		}
		seg[i] = u
	}
	for _, v := range views {
		if matches(v.pattern, seg) {
			return v.Name, true
		}
	}
	return "", false
}

// segments splits an absolute path into its segments ("/" has none).
func segments(p string) []string {
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

// matches reports whether the segments of an address fit a pattern's: the
// same words, and anything in place of {id}.
func matches(pattern, seg []string) bool {
	if len(pattern) != len(seg) {
		return false
	}
	for i, want := range pattern {
		if want != "{id}" && want != seg[i] {
			return false
		}
	}
	return true
}

// idLike reports whether s may be a path segment of a view's address: the
// words of the table and resource ids (letters, digits, ':', '-', '_').
func idLike(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == ':', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}
