package loopback

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestIsHost(t *testing.T) {
	for h, want := range map[string]bool{
		"localhost": true, "LOCALHOST:8080": true, "localhost:": true, "127.0.0.1": true, "127.0.0.1:8080": true,
		"127.9.9.9:1": true, "[::1]": true, "[::1]:8080": true,
		"": false, "::1": false, "localhost:80a": false, "evil.example": false, "evil.example:8080": false,
		"localhost.evil.example": false, "127.0.0.1.nip.io": false, "0.0.0.0:8080": false, "[::]:8080": false,
		"10.0.0.1:8080": false, "[fe80::1%25lo]:80": false, "localhost:8080:1": false,
	} {
		if got := IsHost(h); got != want {
			t.Errorf("IsHost(%q) = %v, want %v", h, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name, host, remote string
		hdr                map[string]string
		want               int
	}{
		{"local", "localhost:8080", "127.0.0.1:5000", nil, 0},
		{"local over IPv6", "[::1]:8080", "[::1]:5000", nil, 0},
		{"rebinding", "evil.example:8080", "127.0.0.1:5000", nil, http.StatusMisdirectedRequest},
		{"remote client", "localhost:8080", "192.0.2.1:5000", nil, http.StatusForbidden},
		{"forwarded from elsewhere", "localhost:8080", "127.0.0.1:5000", map[string]string{"X-Forwarded-For": "192.0.2.1"}, http.StatusForbidden},
		{"forwarded, quoted IPv6", "localhost:8080", "127.0.0.1:5000", map[string]string{"Forwarded": `for="[2001:db8::1]:4711";proto=https`}, http.StatusForbidden},
		{"forwarded, unknown", "localhost:8080", "127.0.0.1:5000", map[string]string{"Forwarded": "for=unknown"}, http.StatusForbidden},
		{"forwarded from loopback", "localhost:8080", "127.0.0.1:5000", map[string]string{"Forwarded": `for="[::1]";proto=http, for=127.0.0.1`}, 0},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Host, r.RemoteAddr = tt.host, tt.remote
		for k, v := range tt.hdr {
			r.Header.Set(k, v)
		}
		if got, reason := Check(r); got != tt.want || (got != 0) != (reason != "") {
			t.Errorf("%s: Check = %d %q, want %d", tt.name, got, reason, tt.want)
		}
	}
}
