package bff

import "strings"

// Device is how the Security view names the browser a wallet session was
// signed in from, derived from the User-Agent header the BFF saw at
// sign-in. It is a hint for a person recognising their own devices, not an
// identity: any program can send any User-Agent.
type Device struct {
	// Browser is the browser and its major version ("Chrome 131"); empty
	// when the User-Agent names none the parser knows.
	Browser string `json:"browser,omitempty"`
	// OS is the operating system ("macOS"); empty when unknown.
	OS string `json:"os,omitempty"`
	// Label is what a person reads: "Chrome on macOS", "Firefox",
	// "Unknown browser on Linux", "Unknown browser".
	Label string `json:"label"`
}

// browserTokens are the product tokens that name a browser, most specific
// first: browsers built on Chromium also send "Chrome/" (and on iOS every
// browser is Safari's engine and sends "Safari/"), so the token a browser
// adds of its own must be found before the one it shares.
var browserTokens = []struct{ token, name string }{
	{"Edg/", "Edge"},
	{"EdgA/", "Edge"},
	{"EdgiOS/", "Edge"},
	{"Edge/", "Edge"}, // the old EdgeHTML Edge
	{"OPR/", "Opera"},
	{"OPT/", "Opera"},
	{"OPiOS/", "Opera"},
	{"SamsungBrowser/", "Samsung Internet"},
	{"FxiOS/", "Firefox"},
	{"Firefox/", "Firefox"},
	{"CriOS/", "Chrome"},
	{"HeadlessChrome/", "Chrome"},
	{"Chromium/", "Chromium"},
	{"Chrome/", "Chrome"},
}

// parseUserAgent names the browser and the operating system of a
// User-Agent header. It knows the major browsers and systems only, looks
// for fixed product tokens (no regular expressions, so a hostile header
// costs linear time), and never fails: what it does not recognise is left
// empty and the label says "Unknown browser".
func parseUserAgent(ua string) Device {
	name, major := browser(ua)
	d := Device{Browser: strings.TrimSpace(name + " " + major), OS: operatingSystem(ua)}
	switch {
	case name != "" && d.OS != "":
		d.Label = name + " on " + d.OS
	case name != "":
		d.Label = name
	case d.OS != "":
		d.Label = "Unknown browser on " + d.OS
	default:
		d.Label = "Unknown browser"
	}
	return d
}

// browser returns the name and the major version (empty when missing) of
// the first known browser token in ua.
func browser(ua string) (name, major string) {
	for _, t := range browserTokens {
		if i := tokenIndex(ua, t.token); i >= 0 {
			return t.name, majorVersion(ua[i+len(t.token):])
		}
	}
	// Safari names itself by "Version/x Safari/y"; other WebKit browsers
	// (in-app web views, for one) send Safari/ without Version/.
	if tokenIndex(ua, "Safari/") >= 0 && !strings.Contains(ua, "Android") {
		if i := tokenIndex(ua, "Version/"); i >= 0 {
			return "Safari", majorVersion(ua[i+len("Version/"):])
		}
	}
	return "", ""
}

// tokenIndex finds a product token that starts a word, so that "Chrome/"
// is not found inside "HeadlessChrome/", nor "Edg/" inside some "XEdg/".
func tokenIndex(ua, token string) int {
	from := 0
	for {
		i := strings.Index(ua[from:], token)
		if i < 0 {
			return -1
		}
		i += from
		if i == 0 || !isTokenByte(ua[i-1]) {
			return i
		}
		from = i + 1
	}
}

func isTokenByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-'
}

// majorVersion is the digits at the start of rest. Only a few are taken: a
// real major version has at most four, and the name must stay short
// whatever the header holds.
func majorVersion(rest string) string {
	n := 0
	for n < len(rest) && n < 4 && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	return rest[:n]
}

// operatingSystem names the system from the platform part of ua. Android
// and ChromeOS say "Linux" too, and iOS says "like Mac OS X", so they are
// looked for first.
func operatingSystem(ua string) string {
	switch {
	case strings.Contains(ua, "iPad"):
		return "iPadOS"
	case strings.Contains(ua, "iPhone"), strings.Contains(ua, "iPod"):
		return "iOS"
	case strings.Contains(ua, "Android"):
		return "Android"
	case strings.Contains(ua, "CrOS"):
		return "ChromeOS"
	case strings.Contains(ua, "Windows"):
		return "Windows"
	case strings.Contains(ua, "Macintosh"), strings.Contains(ua, "Mac OS X"):
		return "macOS"
	case strings.Contains(ua, "Linux"), strings.Contains(ua, "X11"):
		return "Linux"
	}
	return ""
}
