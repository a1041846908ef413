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
// # What the browser can do
//
// The BFF's own routes are few: GET /api/config, POST /api/login/start,
// POST /api/login/verify, GET /api/me and POST /api/logout. Every other /api
// route mirrors one service operation and is declared in one table (routes
// in routes.go) with its method, upstream path template and scope: the
// query parameters bound to the cookie's customer or account, or the owner
// fields a resource must have. A resource of another customer answers the
// same 404 as a missing one.
//
// # Trust boundaries
//
//   - The platform credential never leaves the process: requests to the
//     service are built from scratch (upstream.go) with an allowlist of
//     browser headers, and answers are relayed with an allowlist of service
//     headers.
//   - Every /api request needs "X-CSRF: 1" and must be same-origin by
//     Sec-Fetch-Site or Origin; otherwise it is refused with 403 before
//     anything else happens.
//   - Sessions are server-side ([SessionStore], [MemoryStore]); the cookie
//     [CookieName] only carries 256 random bits, is HttpOnly, Secure and
//     SameSite=Strict, and is replaced by a fresh one at every login step.
//     A cookie the store does not know is cleared and the browser is
//     anonymous; API routes answer 401 JSON, never a redirect.
//   - The BFF never sees a private key: OTP bundles and stamps pass through
//     byte for byte.
//
// # Pages
//
// Pages are served with a strict Content-Security-Policy. The wallet module
// is served precompressed (br, then gzip, then identity, by Accept-Encoding)
// under a content-hashed URL that may be cached forever; /api/config tells
// the pages that URL.
package bff
