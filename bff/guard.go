package bff

import (
	"strings"

	"github.com/gofiber/fiber/v2"
)

// HeaderCSRF is the static header every /api request must carry with the
// value "1". A cross-origin page cannot add it without a CORS preflight,
// which the BFF never grants.
const HeaderCSRF = "X-CSRF"

const headerSecFetchSite = "Sec-Fetch-Site"

// sameOrigin refuses, before anything else happens, an /api request that
// lacks "X-CSRF: 1" or that a browser marks as coming from another origin:
// Sec-Fetch-Site, when present, must be same-origin; otherwise Origin, when
// present, must be the request's own scheme and host. Requests with neither
// header (non-browser clients) pass on the strength of X-CSRF alone.
// The one exception is the page's EventSource on GET /api/events, which
// cannot add a header: it passes without X-CSRF as a same-origin request
// for text/event-stream (eventsAccepted, stream.go).
func (s *Server) sameOrigin(c *fiber.Ctx) error {
	if c.Get(HeaderCSRF) != "1" && !eventsAccepted(c) {
		return errForbidden
	}
	if site := c.Get(headerSecFetchSite); site != "" {
		if site != "same-origin" {
			return errForbidden
		}
	} else if origin := c.Get(fiber.HeaderOrigin); origin != "" {
		if !strings.EqualFold(origin, c.Protocol()+"://"+string(c.Request().Host())) {
			return errForbidden
		}
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Next()
}
