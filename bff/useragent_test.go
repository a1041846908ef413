package bff

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseUserAgent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, ua           string
		browser, os, label string
	}{
		{"Chrome on macOS",
			"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
			"Chrome 131", "macOS", "Chrome on macOS"},
		{"Chrome on Windows",
			"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
			"Chrome 131", "Windows", "Chrome on Windows"},
		{"Chrome on Android",
			"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
			"Chrome 131", "Android", "Chrome on Android"},
		{"Chrome on iPhone",
			"Mozilla/5.0 (iPhone; CPU iPhone OS 17_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1",
			"Chrome 131", "iOS", "Chrome on iOS"},
		{"Chrome on ChromeOS",
			"Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
			"Chrome 131", "ChromeOS", "Chrome on ChromeOS"},
		{"headless Chromium, as the tests drive it",
			"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.6778.85 Safari/537.36",
			"Chrome 131", "Linux", "Chrome on Linux"},
		{"Chromium of a Linux distribution",
			"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Ubuntu Chromium/79.0.3945.79 Chrome/79.0.3945.79 Safari/537.36",
			"Chromium 79", "Linux", "Chromium on Linux"},
		{"Edge on Windows",
			"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86",
			"Edge 131", "Windows", "Edge on Windows"},
		{"Edge on Android",
			"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36 EdgA/131.0.0.0",
			"Edge 131", "Android", "Edge on Android"},
		{"Edge on iPhone",
			"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 EdgiOS/131.2903.68 Mobile/15E148 Safari/605.1.15",
			"Edge 131", "iOS", "Edge on iOS"},
		{"Firefox on Windows",
			"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
			"Firefox 133", "Windows", "Firefox on Windows"},
		{"Firefox on Linux",
			"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
			"Firefox 133", "Linux", "Firefox on Linux"},
		{"Firefox on macOS",
			"Mozilla/5.0 (Macintosh; Intel Mac OS X 14.7; rv:133.0) Gecko/20100101 Firefox/133.0",
			"Firefox 133", "macOS", "Firefox on macOS"},
		{"Firefox on Android",
			"Mozilla/5.0 (Android 15; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0",
			"Firefox 133", "Android", "Firefox on Android"},
		{"Firefox on iPhone",
			"Mozilla/5.0 (iPhone; CPU iPhone OS 17_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/133.0 Mobile/15E148 Safari/605.1.15",
			"Firefox 133", "iOS", "Firefox on iOS"},
		{"Safari on macOS",
			"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
			"Safari 18", "macOS", "Safari on macOS"},
		{"Safari on iPhone",
			"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
			"Safari 18", "iOS", "Safari on iOS"},
		{"Safari on iPad",
			"Mozilla/5.0 (iPad; CPU OS 17_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.7 Mobile/15E148 Safari/604.1",
			"Safari 17", "iPadOS", "Safari on iPadOS"},
		{"Opera on Windows",
			"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 OPR/115.0.0.0",
			"Opera 115", "Windows", "Opera on Windows"},
		{"Opera on Android",
			"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Mobile Safari/537.36 OPR/86.0.0.0",
			"Opera 86", "Android", "Opera on Android"},
		{"Samsung Internet",
			"Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36",
			"Samsung Internet 26", "Android", "Samsung Internet on Android"},
		{"an Android web view is not Safari",
			"Mozilla/5.0 (Linux; U; Android 4.0.3; en-us) AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30",
			"", "Android", "Unknown browser on Android"},
		{"curl", "curl/8.5.0", "", "", "Unknown browser"},
		{"empty", "", "", "", "Unknown browser"},
		{"a token inside a word is not the token", "Mozilla/5.0 (X11; Linux x86_64) NotChrome/99", "", "Linux", "Unknown browser on Linux"},
		{"no version", "Mozilla/5.0 (Windows NT 10.0) Firefox/", "Firefox", "Windows", "Firefox on Windows"},
		{"a long version is cut", "Mozilla/5.0 (Windows NT 10.0) Firefox/1234567890", "Firefox 1234", "Windows", "Firefox on Windows"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := parseUserAgent(tc.ua)
			want := Device{Browser: tc.browser, OS: tc.os, Label: tc.label}
			if got != want {
				t.Errorf("parseUserAgent(%q)\n got %+v\nwant %+v", tc.ua, got, want)
			}
		})
	}
}

// FuzzParseUserAgent checks that any header gives a short, printable label
// built from known names, so nothing a browser sends reaches the page
// except through the parser's own words and digits.
func FuzzParseUserAgent(f *testing.F) {
	for _, s := range []string{
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
		"Edg/Edg/OPR/", "Chrome/\x00<script>", "Version/9 Safari/1", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ua string) {
		d := parseUserAgent(ua)
		if d.Label == "" || len(d.Label) > 64 || !utf8.ValidString(d.Label) {
			t.Fatalf("label %q", d.Label)
		}
		for _, r := range d.Label + d.Browser + d.OS {
			if !(r == ' ' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				t.Fatalf("%+v holds %q, not from the parser's words", d, r)
			}
		}
		if d.Browser != "" && !strings.HasPrefix(d.Label, strings.TrimRight(d.Browser, " 0123456789")) {
			t.Fatalf("label %q does not name browser %q", d.Label, d.Browser)
		}
	})
}
