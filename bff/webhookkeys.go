package bff

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"paywallet/shared/webhooksig"
)

// The service's webhook keys: its JWKS (GET <ServiceURL>/webhooks/jwks.json,
// no credential), read with paywallet/shared/webhooksig, which also checks
// the signatures.
//
// An unknown kid makes the BFF fetch the keys again, at most once a minute
// after a fetch that worked (a forged kid cannot make it hammer the
// service) and every few seconds after one that failed; known keys are
// fetched again after an hour, so that a key the service withdrew stops
// being honoured.
const (
	jwksRefetchAfter = time.Minute
	jwksRetryAfter   = 5 * time.Second
	jwksMaxAge       = time.Hour
	maxJWKSBody      = 64 << 10
)

var errUnknownKid = errors.New("webhook signed with a key the service does not publish")

// jwksCache holds the service's webhook keys.
type jwksCache struct {
	url    string
	client *http.Client
	now    func() time.Time

	mu      sync.Mutex
	keys    *webhooksig.JWKS
	fetched time.Time // the last fetch that worked
	tried   time.Time // the last attempt
	failed  bool      // the last attempt failed
}

// keySet returns the service's keys, holding kid, fetching them when kid is
// unknown or they are old (see above). An error other than errUnknownKid
// means the keys could not be had at all.
func (c *jwksCache) keySet(ctx context.Context, kid string) (webhooksig.JWKS, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	known := c.keys != nil && has(*c.keys, kid)
	if known && now.Sub(c.fetched) < jwksMaxAge {
		return *c.keys, nil
	}
	wait := jwksRefetchAfter
	if c.failed {
		wait = jwksRetryAfter
	}
	if !c.tried.IsZero() && now.Sub(c.tried) < wait {
		switch {
		case known:
			return *c.keys, nil // old, but not withdrawn as far as we know
		case c.keys == nil:
			return webhooksig.JWKS{}, errors.New("webhook keys: not fetched yet")
		}
		return webhooksig.JWKS{}, errUnknownKid
	}
	c.tried = now
	keys, err := c.fetch(ctx)
	c.failed = err != nil
	switch {
	case err != nil && known:
		return *c.keys, nil // keep using them until the service answers
	case err != nil && c.keys == nil:
		return webhooksig.JWKS{}, err
	case err != nil:
		return webhooksig.JWKS{}, errUnknownKid
	}
	c.keys, c.fetched = &keys, now
	if !has(keys, kid) {
		return webhooksig.JWKS{}, errUnknownKid
	}
	return keys, nil
}

func has(set webhooksig.JWKS, kid string) bool {
	_, err := set.Key(kid)
	return err == nil
}

func (c *jwksCache) fetch(ctx context.Context) (webhooksig.JWKS, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return webhooksig.JWKS{}, fmt.Errorf("webhook keys: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "paywallet-bff")
	resp, err := c.client.Do(req)
	if err != nil {
		return webhooksig.JWKS{}, fmt.Errorf("webhook keys: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBody+1))
	if err != nil {
		return webhooksig.JWKS{}, fmt.Errorf("webhook keys: %w", err)
	}
	if resp.StatusCode != http.StatusOK || len(b) > maxJWKSBody {
		return webhooksig.JWKS{}, fmt.Errorf("webhook keys: GET %s answered %d (%d bytes)", c.url, resp.StatusCode, len(b))
	}
	set, err := webhooksig.ParseJWKS(b)
	if err != nil {
		return webhooksig.JWKS{}, fmt.Errorf("webhook keys from %s: %w", c.url, err)
	}
	return set, nil
}
