// Package loopback tells whether an HTTP request stays on this machine: sent
// by a client on a loopback address and addressed to a loopback host name.
// The development-only pages (the dev mailbox, the dev OpenID issuer) answer
// nothing else.
//
// Both halves matter. A page that listens on all interfaces can be reached
// from other machines; their requests come from a non-loopback address. And
// a web page on any site can point its own domain at 127.0.0.1 (DNS
// rebinding) and then read a local page as "same origin": its requests come
// from loopback but carry that domain in Host.
//
// It imports only the standard library.
package loopback

import (
	"net"
	"net/http"
	"strings"
)

// IsName reports whether host, a host name or IP address without port or
// brackets, names this machine: "localhost" in any letter case, or a
// loopback address (127.0.0.0/8, ::1).
func IsName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsHost reports whether a Host header value names this machine, with any
// port or none: localhost, 127.0.0.1, [::1], localhost:8080, …
func IsHost(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	switch {
	case err == nil:
		if strings.Trim(port, "0123456789") != "" {
			return false
		}
	case strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]"):
		host = hostport[1 : len(hostport)-1]
	case strings.Contains(hostport, ":"):
		return false // an IPv6 address needs brackets in Host
	default:
		host = hostport
	}
	return IsName(host)
}

// isAddr reports whether a client address, an IP address with or without a
// port (IPv6 in brackets when with one), is loopback. Names do not count.
func isAddr(addr string) bool {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	} else if strings.HasPrefix(addr, "[") && strings.HasSuffix(addr, "]") {
		addr = addr[1 : len(addr)-1]
	}
	ip := net.ParseIP(addr)
	return ip != nil && ip.IsLoopback()
}

// fromLoopback reports whether r's peer is on loopback and so is every
// client a proxy named in X-Forwarded-For, X-Real-Ip or Forwarded: a
// reverse proxy on this machine forwards requests from elsewhere, and says
// so there (a loopback client could forge those headers, but only to refuse
// itself).
func fromLoopback(r *http.Request) bool {
	if !isAddr(r.RemoteAddr) {
		return false
	}
	for _, name := range []string{"X-Forwarded-For", "X-Real-Ip"} {
		for _, v := range r.Header.Values(name) {
			for _, a := range strings.Split(v, ",") {
				if !isAddr(strings.TrimSpace(a)) {
					return false
				}
			}
		}
	}
	for _, v := range r.Header.Values("Forwarded") {
		for _, elem := range strings.Split(v, ",") {
			for _, pair := range strings.Split(elem, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(pair), "=")
				if strings.EqualFold(k, "for") && !isAddr(strings.Trim(val, `"`)) {
					return false
				}
			}
		}
	}
	return true
}

// Check says whether r may be answered: 0 when it stays on this machine,
// else the status to refuse it with and why. 421 Misdirected Request is for
// a Host that does not name this machine, 403 Forbidden for a client that
// is not on it.
func Check(r *http.Request) (status int, reason string) {
	if !IsHost(r.Host) {
		return http.StatusMisdirectedRequest, "this development page answers only requests addressed to localhost, 127.0.0.1 or [::1]"
	}
	if !fromLoopback(r) {
		return http.StatusForbidden, "this development page answers only clients on this machine"
	}
	return 0, ""
}
