package inproc

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		user, pass, _ := r.BasicAuth()
		w.Header().Set("X-Seen", r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery+" "+user+":"+pass+" "+string(b))
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	c := &http.Client{Transport: Transport{Handler: h}}
	req, _ := http.NewRequest("POST", "http://service.internal/2025-10-13/x?a=1", strings.NewReader("hello"))
	req.SetBasicAuth("id", "secret")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted || string(body) != `{"ok":true}` {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	if got, want := resp.Header.Get("X-Seen"), "POST /2025-10-13/x?a=1 id:secret hello"; got != want {
		t.Fatalf("handler saw %q, want %q", got, want)
	}
	if resp.ContentLength != int64(len(body)) {
		t.Fatalf("ContentLength %d, body %d", resp.ContentLength, len(body))
	}
}

func TestImplicitOK(t *testing.T) {
	c := &http.Client{Transport: Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}}
	resp, err := c.Get("http://x/")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}
