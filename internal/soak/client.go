package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"paywallet/shared/wire"
)

// client sends the soak's requests to the instances as a client of a load
// balancer would: each attempt to any instance, and a request whose answer
// was lost (the connection broke because the instance died, the database
// was down and the service answered 5xx, or the attempt timed out) again,
// with the same Idempotency-Key and body, until it gets an answer.
type client struct {
	instances []*instance
	user, pw  string
	hc        *http.Client
	// patience bounds how long one request is retried before the soak
	// reports the service unavailable.
	patience time.Duration
	// dropRate is the share of answers to requests that may be repeated
	// (with an Idempotency-Key, or safe to repeat) that the client throws
	// away as if the network had lost them after the service committed:
	// the retry must get the same answer, and do nothing twice.
	dropRate float64

	attempts, lost, fiveXX, dropped atomic.Int64
	unanswered                      atomic.Int64

	fmu      sync.Mutex
	statuses map[int]int64 // attempts answered 5xx or 429, by status
	writes   []time.Time   // when each POST was answered 2xx (a write done)

	mu      sync.Mutex
	answers map[string][]answer // by Idempotency-Key: every answer it got
}

// answer is a response with a status below 500: the service decided.
type answer struct {
	status   int
	body     []byte
	replayed bool
	via      string
}

// request is one API call. Headers are name, value pairs.
type request struct {
	method, path string
	body         any // JSON-encoded once: every retry sends the same bytes
	key          string
	bearer       string // an agent's access token instead of the platform credential
	headers      []string
	// retryUnauthorized is set for a signed retry: the 401 it may get when
	// a racing attempt of the same key has consumed its challenge is
	// retried too, to read the first attempt's answer.
	retryUnauthorized bool
	// repeatable marks a request without a key that is safe to send again
	// (a cancel): its answers may be dropped too.
	repeatable bool
}

func newClient(instances []*instance, credential string, patience time.Duration) *client {
	user, pw, _ := cut(credential, ':')
	return &client{
		instances: instances, user: user, pw: pw, patience: patience,
		hc: &http.Client{
			Timeout:   10 * time.Second,
			Transport: &http.Transport{MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second},
		},
		answers: map[string][]answer{},
	}
}

func cut(s string, sep byte) (string, string, bool) {
	if i := bytes.IndexByte([]byte(s), sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// do sends r until an instance answers it (status below 500), and returns
// that answer. rnd picks the instance of each attempt.
func (c *client) do(ctx context.Context, rnd *rand.Rand, r request) (answer, error) {
	var body []byte
	if r.body != nil {
		var err error
		if body, err = json.Marshal(r.body); err != nil {
			return answer{}, err
		}
	}
	deadline := time.Now().Add(c.patience)
	backoff := 20 * time.Millisecond
	var last string
	for n := 0; ; n++ {
		if time.Now().After(deadline) {
			c.unanswered.Add(1)
			return answer{}, fmt.Errorf("%s %s (Idempotency-Key %q): no answer in %s of retries; last: %s", r.method, r.path, r.key, c.patience, last)
		}
		in := c.instances[(rnd.IntN(len(c.instances))+n)%len(c.instances)]
		a, err := c.once(ctx, in, r, body)
		c.attempts.Add(1)
		c.note(r.method, a, err)
		switch {
		case err != nil && ctx.Err() != nil:
			return answer{}, ctx.Err()
		case err != nil:
			c.lost.Add(1)
			last = err.Error()
		case a.status >= 500 || a.status == http.StatusTooManyRequests:
			c.fiveXX.Add(1)
			last = fmt.Sprintf("%d %s", a.status, clip(a.body))
		case a.status == http.StatusUnauthorized && r.retryUnauthorized && n < 20:
			c.record(r.key, a)
			last = fmt.Sprintf("%d %s", a.status, clip(a.body))
		case (r.key != "" || r.repeatable) && rnd.Float64() < c.dropRate:
			c.record(r.key, a)
			c.dropped.Add(1)
			last = "answer dropped"
			continue // at once: the retry races nothing but the service's own commit
		default:
			c.record(r.key, a)
			return a, nil
		}
		select {
		case <-ctx.Done():
			return answer{}, ctx.Err()
		case <-time.After(backoff + time.Duration(rnd.Int64N(int64(backoff)))):
		}
		backoff = min(2*backoff, 400*time.Millisecond)
	}
}

func (c *client) once(ctx context.Context, in *instance, r request, body []byte) (answer, error) {
	var rd io.Reader = http.NoBody
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, in.base()+wire.BasePath+r.path, rd)
	if err != nil {
		return answer{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+r.bearer)
	} else {
		req.SetBasicAuth(c.user, c.pw)
	}
	if r.key != "" {
		req.Header.Set(wire.HeaderIdempotencyKey, r.key)
	}
	for i := 0; i+1 < len(r.headers); i += 2 {
		req.Header.Set(r.headers[i], r.headers[i+1])
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, err
	}
	return answer{status: resp.StatusCode, body: b, replayed: resp.Header.Get("Idempotent-Replayed") == "true", via: in.name}, nil
}

// record keeps an answer given under key, for the check that one key
// always gets one answer.
func (c *client) record(key string, a answer) {
	if key == "" {
		return
	}
	c.mu.Lock()
	c.answers[key] = append(c.answers[key], a)
	c.mu.Unlock()
}

// inconsistentKeys lists the keys that got different answers: a request
// repeated with its Idempotency-Key must get the first answer again, byte
// for byte, but for an error body's requestId (each attempt is a request
// of its own, with its own id, unless the service replays a stored answer).
func (c *client) inconsistentKeys() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []error
	for key, as := range c.answers {
		for _, a := range as[1:] {
			if a.status != as[0].status || !bytes.Equal(keyedPart(a), keyedPart(as[0])) {
				out = append(out, fmt.Errorf("Idempotency-Key %q got two answers: %d %s (via %s) and %d %s (via %s, replayed %v)",
					key, as[0].status, clip(as[0].body), as[0].via, a.status, clip(a.body), a.via, a.replayed))
				break
			}
		}
	}
	return out
}

// decode reads a JSON answer into out.
func (a answer) decode(out any) error {
	if err := json.Unmarshal(a.body, out); err != nil {
		return fmt.Errorf("answer %d %s: %w", a.status, clip(a.body), err)
	}
	return nil
}

// code is the error code of a refusal ("" when there is none).
func (a answer) code() string {
	var e struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(a.body, &e)
	return e.Code
}

func clip(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

// keyedPart is what of an answer must repeat under its key: the body, an
// error body without its requestId (a success's "requestId", a signed
// retry's challenge id, is compared as it is).
func keyedPart(a answer) []byte {
	if a.status >= 400 {
		return withoutRequestID(a.body)
	}
	return a.body
}

// withoutRequestID is a JSON object body without its top-level
// "requestId" member (other bodies as they are), re-encoded.
func withoutRequestID(body []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	if _, ok := m["requestId"]; !ok {
		return body
	}
	delete(m, "requestId")
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}
