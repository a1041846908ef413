// Package bff is the wallet's backend-for-frontend: a small Fiber server
// that serves the pages of package web and an /api for them, holds the
// platform credential of the payments service, and binds every browser to
// one customer.
//
// # Use
//
// [New] builds a [Server] from a [Config]; [Server.Listen] or
// [Server.Listener] serve it and [Server.Shutdown] stops it without waiting
// on idle keep-alive connections. [Server.App] exposes the Fiber app for
// in-process tests.
//
// Every /api request runs under a 20 s deadline that covers all its calls
// to the service, derived from a context that Shutdown cancels when its
// grace period ends. A panic in a handler is recovered, logged with its
// stack and answered 500 INTERNAL_ERROR.
//
// # What the browser can do
//
// The BFF's own routes are few: GET /api/config, the logins (POST
// /api/login/start, /api/login/verify, the passkey and OAuth ones), GET
// /api/me, POST /api/logout, GET /api/events (see Events), and the three
// that change the cookie session itself (adding a credential, refreshing or
// revoking a session). Every other /api route mirrors one service operation
// and is one line of one table (routes in routes.go): its method, upstream
// path template and scope: the query parameters bound to the cookie's
// customer or account, the owner fields a resource must have, checked
// before any operation with effects, the ids in the path that must be the
// cookie's own (the wallet's statement, GET
// /api/internal-accounts/{id}/entries, and its signed retries), ids taken
// from the cookie rather than the path (POST /api/sandbox/fund), the
// listing an id must be among (a credential of the wallet), the body fields
// a create gets from the cookie (set), or "shared" for reference data that
// holds no customer's data (GET /api/discoveries), which still needs a
// signed-in cookie. The table is checked when the server starts: a route
// whose scope does not confine it to the cookie's own resources refuses to
// mount. A resource of another customer answers the same 404 as a missing
// one. Without a signed-in cookie every route answers 401, except GET
// /api/me, which answers the question a page asks first, "who is signed in
// here?", with 200 {"signedIn": false}: a signed-out visit then logs no
// failed request in the browser.
//
// A create has no resource to own yet, so its line binds the body: creating
// an external account sets the body's customerId to the cookie's customer,
// replacing whatever the browser sent (another customer's id, or null,
// which would mean a platform account), and checks the body with
// shared/accountrules, the rules the service and the wasm module run,
// before anything is sent; a quote's source becomes the cookie's wallet.
//
// POST /api/login/start is anonymous, so it is throttled per client address
// and per e-mail address ([Config.LoginPerIP], [Config.LoginPerEmail], a
// [Limiter]); over a limit it answers 429 RATE_LIMITED with Retry-After (in
// the header, and in details.retryAfter).
//
// # Events
//
// The service's webhooks come in at POST /webhooks/service (outside /api:
// no cookie, no X-CSRF), checked with paywallet/shared/webhooksig against
// the keys the service publishes at <ServiceURL>/webhooks/jwks.json
// (cached; an unknown key id refetches them at most once a minute): a bad
// signature or one more than five minutes off answers 401. Each webhook id
// is recorded once in an [EventLog] ([MemoryEventLog], or bffpg's, shared
// by the instances through a table and LISTEN/NOTIFY); a repeat is
// answered 200 and not passed on again. A new webhook goes to the browsers
// of its customer (the resource's customerId) on every instance: GET
// /api/events is a Server-Sent Events stream (id = webhook id, event =
// type, data = the envelope), with a heartbeat every 15 s, Last-Event-ID
// resumption from the instance's last 100 events of the customer, and
// "signed-out" when the cookie's session ends (checked at each heartbeat
// and event). The page's EventSource cannot send X-CSRF, so that one route
// takes a same-origin request for text/event-stream instead. Streams end
// when Shutdown begins.
//
// # Trust boundaries
//
//   - The platform credential never leaves the process: requests to the
//     service are built from scratch (upstream.go) with an allowlist of
//     browser headers, and answers are relayed with an allowlist of service
//     headers.
//   - Every /api request needs "X-CSRF: 1" and must be same-origin by
//     Sec-Fetch-Site or Origin; otherwise it is refused with 403 before
//     anything else happens. X-Forwarded-* headers count only from
//     [Config.TrustedProxies].
//   - Sessions are server-side ([SessionStore]: a [MemoryStore] by default,
//     or PostgreSQL through package [paywallet/bff/bffpg], which several
//     instances share, together with the login limits); the cookie
//     [CookieName] only carries 256 random bits, is HttpOnly, Secure and
//     SameSite=Strict, and is replaced by a fresh one at every login step.
//     A cookie the store does not know is cleared and the browser is
//     anonymous; API routes answer 401 JSON, never a redirect.
//   - The BFF never sees a private key: OTP bundles and stamps pass through
//     byte for byte.
//   - For each wallet session it signs in, the BFF keeps the browser's
//     User-Agent (printable ASCII, at most [MaxUserAgent] bytes) and the
//     time, in the session store ([SignInStore]), until the wallet session
//     ends or is revoked; GET /api/auth/sessions names each session's
//     device from it. It is what the browser claimed, shown to help a
//     person recognise a session, never used to decide anything.
//
// # Pages
//
// Pages are served with a strict Content-Security-Policy; their errors are
// plain text. The wallet module is served precompressed (br, then gzip,
// then identity, by Accept-Encoding) under a content-hashed URL that may be
// cached forever; /api/config tells the pages that URL. A precompressed
// copy is served only if it decompresses to the raw file at start-up.
package bff
