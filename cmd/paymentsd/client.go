package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"paywallet/shared/wire"
)

// The developer commands (listen, trigger) call a running service's
// platform API like any platform does: HTTP Basic with the platform
// credential. Both read the service's URL and the credential from flags
// or the environment.

const (
	// envServiceURL names the service the developer commands call.
	envServiceURL = "PAYMENTS_SERVICE_URL"
	// envCredential is the platform credential, the variable the
	// service itself reads it from, so one shell can run both.
	envCredential = "WALLET_PLATFORM_CREDENTIAL"
	// defaultServiceURL is where `paymentsd` listens by default.
	defaultServiceURL = "http://127.0.0.1:8081" + wire.BasePath
)

// clientFlags are the flags every developer command takes.
type clientFlags struct {
	service, credential string
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	service := defaultServiceURL
	if v := os.Getenv(envServiceURL); v != "" {
		service = v
	}
	fs.StringVar(&c.service, "service", service, "the service's base URL, with "+wire.BasePath+" (added when missing) ["+envServiceURL+"]")
	// No default from the environment: the flag package prints a flag's
	// default in its help, and this one is a secret (newClient reads it).
	fs.StringVar(&c.credential, "credential", "", "the platform credential, <token id>:<secret>; prefer the environment variable ["+envCredential+"]")
}

// client is a platform's client of the service.
type client struct {
	base       string // ends with wire.BasePath, no slash after
	user, pass string
	http       *http.Client
}

// newClient checks the flags and makes the client.
func (c *clientFlags) newClient() (*client, error) {
	if c.credential == "" {
		c.credential = os.Getenv(envCredential)
	}
	u, err := url.Parse(strings.TrimRight(c.service, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--service %q: must be the service's http(s) URL, such as %s", c.service, defaultServiceURL)
	}
	if !strings.HasSuffix(u.Path, wire.BasePath) {
		u.Path += wire.BasePath
	}
	user, pass, ok := strings.Cut(c.credential, ":")
	if !ok || user == "" || pass == "" {
		return nil, errors.New("--credential (or " + envCredential + ") is required: the platform credential, <token id>:<secret>")
	}
	return &client{base: u.String(), user: user, pass: pass, http: &http.Client{Timeout: 30 * time.Second}}, nil
}

// call sends a request with the platform credential and decodes a 2xx
// answer into out (when not nil); any other answer is an apiError.
func (c *client) call(ctx context.Context, method, path string, body, out any) error {
	var rdr io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rdr = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rdr)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.SetBasicAuth(c.user, c.pass)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &apiError{method: method, path: path, status: resp.StatusCode}
		if json.Unmarshal(raw, &e.body) != nil || e.body.Code == "" {
			e.body = wire.Error{Status: resp.StatusCode, Message: strings.TrimSpace(string(raw))}
		}
		return e
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// apiError is a refusal of the service: its code, message and every
// field it names.
type apiError struct {
	method, path string
	status       int
	body         wire.Error
}

func (e *apiError) Error() string {
	msg := fmt.Sprintf("%s %s: %d", e.method, e.path, e.status)
	if e.body.Code != "" {
		msg += " " + e.body.Code
	}
	if e.body.Message != "" {
		msg += ": " + e.body.Message
	}
	if fields, ok := e.body.Details["errors"].([]any); ok {
		for _, f := range fields {
			if m, ok := f.(map[string]any); ok {
				msg += fmt.Sprintf("\n  %v: %v", m["field"], m["message"])
			}
		}
	}
	return msg
}

// splitArgs takes positional arguments out from among the flags, so that
// `paymentsd trigger TYPE --service …` and `paymentsd trigger --service …
// TYPE` both parse: Go's flag package stops at the first argument that is
// not a flag.
func splitArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
