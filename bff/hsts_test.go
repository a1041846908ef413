package bff

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"
)

const wantHSTS = "max-age=63072000; includeSubDomains"

// TestHSTSOnlyOverHTTPS: Strict-Transport-Security goes on every answer
// served over HTTPS, whether the BFF terminates TLS itself or a trusted
// proxy says so with X-Forwarded-Proto, and on none served over plain HTTP,
// where it would pin a developer's localhost to HTTPS; an untrusted peer's
// X-Forwarded-Proto does not count.
func TestHSTSOnlyOverHTTPS(t *testing.T) {
	t.Parallel()
	paths := []string{"/", "/index.html", "/js/app.js", "/api/config", "/no-such-page", "/healthz"}
	plain := newHarness(t)
	trusted := newHarness(t, func(c *Config) { c.TrustedProxies = []string{"0.0.0.0/32"} }) // App.Test peers are 0.0.0.0
	for _, p := range paths {
		if got := plain.do("GET", p, "", nil).header.Values("Strict-Transport-Security"); len(got) != 0 {
			t.Errorf("plain http GET %s: Strict-Transport-Security %q", p, got)
		}
		if got := plain.do("GET", p, "", map[string]string{"X-Forwarded-Proto": "https"}).header.Values("Strict-Transport-Security"); len(got) != 0 {
			t.Errorf("untrusted X-Forwarded-Proto: https, GET %s: Strict-Transport-Security %q", p, got)
		}
		if got := trusted.do("GET", p, "", nil).header.Values("Strict-Transport-Security"); len(got) != 0 {
			t.Errorf("trusted proxy, plain http, GET %s: Strict-Transport-Security %q", p, got)
		}
		if got := trusted.do("GET", p, "", map[string]string{"X-Forwarded-Proto": "http"}).header.Values("Strict-Transport-Security"); len(got) != 0 {
			t.Errorf("trusted proxy says http, GET %s: Strict-Transport-Security %q", p, got)
		}
		if got := trusted.do("GET", p, "", map[string]string{"X-Forwarded-Proto": "https"}).header.Values("Strict-Transport-Security"); len(got) != 1 || got[0] != wantHSTS {
			t.Errorf("trusted proxy says https, GET %s: Strict-Transport-Security %q, want %q", p, got, wantHSTS)
		}
	}

	// TLS terminated by the BFF itself.
	tlsHarness := newHarness(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = tlsHarness.srv.Listener(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tlsHarness.srv.Shutdown(ctx)
	})
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	defer client.CloseIdleConnections()
	for _, p := range paths {
		resp, err := client.Get("https://" + ln.Addr().String() + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Values("Strict-Transport-Security"); len(got) != 1 || got[0] != wantHSTS {
			t.Errorf("over TLS, GET %s (%d): Strict-Transport-Security %q, want %q", p, resp.StatusCode, got, wantHSTS)
		}
	}
}

// selfSigned makes a certificate for 127.0.0.1.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
