package devoidc

import (
	"bytes"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"paywallet/internal/loopback"
)

const (
	maxFormBytes = 64 << 10
	maxNonce     = 256  // the nonce ends up in the token, which verifiers bound
	maxState     = 1024 // state comes back in the redirect only
)

func (is *Issuer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", is.serveJSON(is.discovery))
	mux.HandleFunc("GET /jwks", is.serveJSON(is.jwks))
	mux.HandleFunc("GET /authorize", is.authorizeGet)
	mux.HandleFunc("POST /authorize", is.authorizePost)
	return is.checkHost(mux)
}

// checkHost answers only requests addressed to a loopback name on our
// port. Listening on loopback keeps other machines out, but a web page can
// point its own domain at 127.0.0.1 (DNS rebinding) and then talk to us as
// "same origin"; such requests carry that domain in Host and stop here.
func (is *Issuer) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, port, err := net.SplitHostPort(r.Host)
		if err != nil || port != is.port || !loopback.IsName(host) {
			http.Error(w, "unexpected Host header", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (is *Issuer) serveJSON(body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(body)
	}
}

// authRequest holds the parameters of one authorization request, carried
// from the query string into the form's hidden fields and back.
type authRequest struct {
	ClientID     string
	RedirectURI  string
	ResponseType string
	Scope        string
	Nonce        string
	State        string
}

func readAuthRequest(v url.Values) authRequest {
	return authRequest{
		ClientID:     v.Get("client_id"),
		RedirectURI:  v.Get("redirect_uri"),
		ResponseType: v.Get("response_type"),
		Scope:        v.Get("scope"),
		Nonce:        v.Get("nonce"),
		State:        v.Get("state"),
	}
}

// checkClient validates what decides where answers may go. When it fails
// nothing may be sent to redirect_uri: an unregistered redirect would make
// this an open redirector that hands out tokens.
func (is *Issuer) checkClient(a authRequest) string {
	if a.ClientID != is.clientID {
		return "Unknown client_id."
	}
	if a.RedirectURI == "" || !is.redirectAllowed(a.RedirectURI) {
		return "This redirect_uri is not registered with the development identity provider."
	}
	return ""
}

// checkProtocol validates the rest. Its failures are reported to the
// client at its (now trusted) redirect_uri, as OAuth 2.0 §4.2.2.1 says.
func checkProtocol(a authRequest) (code, description string) {
	switch {
	case a.ResponseType != "id_token":
		return "unsupported_response_type", "only response_type=id_token is supported"
	case !slices.Contains(strings.Fields(a.Scope), "openid"):
		return "invalid_scope", "scope must include openid"
	case a.Nonce == "":
		return "invalid_request", "nonce is required"
	case len(a.Nonce) > maxNonce:
		return "invalid_request", "nonce is too long"
	case len(a.State) > maxState:
		return "invalid_request", "state is too long"
	}
	return "", ""
}

func (is *Issuer) authorizeGet(w http.ResponseWriter, r *http.Request) {
	a := readAuthRequest(r.URL.Query())
	if msg := is.checkClient(a); msg != "" {
		writeErrorPage(w, http.StatusBadRequest, msg)
		return
	}
	if code, desc := checkProtocol(a); code != "" {
		redirectFragment(w, a.RedirectURI, url.Values{"error": {code}, "error_description": {desc}}, a.State)
		return
	}
	is.writeForm(w, http.StatusOK, a, "", "")
}

func (is *Issuer) authorizePost(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		writeErrorPage(w, http.StatusBadRequest, "The form could not be read.")
		return
	}
	a := readAuthRequest(r.PostForm)
	if msg := is.checkClient(a); msg != "" {
		writeErrorPage(w, http.StatusBadRequest, msg)
		return
	}
	if code, desc := checkProtocol(a); code != "" {
		redirectFragment(w, a.RedirectURI, url.Values{"error": {code}, "error_description": {desc}}, a.State)
		return
	}
	email := strings.TrimSpace(r.PostForm.Get("email"))
	if email == "" {
		is.writeForm(w, http.StatusBadRequest, a, email, "Enter an e-mail address.")
		return
	}
	if !validEmail(email) {
		is.writeForm(w, http.StatusBadRequest, a, email, "That does not look like an e-mail address.")
		return
	}
	tok, err := is.Mint(Claims{Email: email, Nonce: a.Nonce})
	if err != nil {
		writeErrorPage(w, http.StatusInternalServerError, "The token could not be made.")
		return
	}
	redirectFragment(w, a.RedirectURI, url.Values{"id_token": {tok}}, a.State)
}

// redirectFragment sends the browser to uri with the response in the
// fragment (response_mode=fragment), so the token never reaches a server
// log or a Referer header. 303 makes the browser follow a POST with a GET.
func redirectFragment(w http.ResponseWriter, uri string, params url.Values, state string) {
	if state != "" {
		params.Set("state", state)
	}
	// The token (or error) first and state last, the order OAuth's own
	// examples use; url.Values.Encode would sort the keys instead.
	var b strings.Builder
	for _, k := range []string{"id_token", "error", "error_description", "state"} {
		if v, ok := params[k]; ok {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(k + "=" + url.QueryEscape(v[0]))
		}
	}
	w.Header().Set("Location", uri+"#"+b.String())
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusSeeOther)
}

// validEmail follows the HTML standard's "valid e-mail address" (what a
// browser's type=email accepts), so the page and the server agree: a local
// part of atext and dots, then dot-separated labels of letters, digits and
// inner hyphens.
func validEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	at := strings.IndexByte(s, '@')
	if at < 1 || at > 64 {
		return false
	}
	local, domain := s[:at], s[at+1:]
	for i := 0; i < len(local); i++ {
		c := local[i]
		if !(isAlnum(c) || strings.IndexByte(".!#$%&'*+/=?^_`{|}~-", c) >= 0) {
			return false
		}
	}
	if domain == "" {
		return false
	}
	for _, label := range strings.Split(domain, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if !isAlnum(label[i]) && label[i] != '-' {
				return false
			}
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// setPageHeaders forbids everything the pages do not need. form-action
// names the redirect origin too: browsers apply it to the redirect that
// follows a form submission, and the 303 goes there.
func setPageHeaders(w http.ResponseWriter, formTarget string) {
	formAction := "'none'"
	if formTarget != "" {
		formAction = "'self' " + formTarget
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action "+formAction+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

type formPage struct {
	authRequest
	Origin string
	Email  string
	Error  string
}

func (is *Issuer) writeForm(w http.ResponseWriter, status int, a authRequest, email, problem string) {
	o := origin(a.RedirectURI)
	render(w, status, o, formTemplate, formPage{authRequest: a, Origin: o, Email: email, Error: problem})
}

func writeErrorPage(w http.ResponseWriter, status int, msg string) {
	render(w, status, "", errorTemplate, msg)
}

// render executes into a buffer first, so a template failure becomes a
// clean 500 rather than half a page.
func render(w http.ResponseWriter, status int, formTarget string, t *template.Template, data any) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		http.Error(w, "page could not be rendered", http.StatusInternalServerError)
		return
	}
	setPageHeaders(w, formTarget)
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

const pageStyle = `<style>
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;background:#f4f5f7;color:#1d2430}
main{max-width:26rem;margin:8vh auto;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.12)}
h1{font-size:1.4rem;margin:0 0 1rem}
.note{background:#fff6d6;border:1px solid #e8d48a;border-radius:8px;padding:.75rem;font-size:.9rem}
label{display:block;font-weight:600;margin:1rem 0 .35rem}
input[type=email]{box-sizing:border-box;width:100%;padding:.6rem;font:inherit;border:1px solid #9aa3b2;border-radius:6px}
button{margin-top:1rem;width:100%;padding:.65rem;font:inherit;font-weight:600;color:#fff;background:#2456d3;border:0;border-radius:6px;cursor:pointer}
.error{color:#b00020;margin:.4rem 0 0}
.meta{color:#5b6473;font-size:.85rem}
</style>`

var formTemplate = template.Must(template.New("form").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Development sign-in</title>
` + pageStyle + `
</head>
<body>
<main>
<h1>Development sign-in</h1>
<p class="note">This is the <strong>local development identity provider</strong> running on this machine. It is not a real sign-in service: it accepts any e-mail address without a password, and only development setups trust what it issues.</p>
<p class="meta">Signing in to <strong>{{.ClientID}}</strong> at {{.Origin}}</p>
<form method="post" action="/authorize">
<input type="hidden" name="client_id" value="{{.ClientID}}">
<input type="hidden" name="redirect_uri" value="{{.RedirectURI}}">
<input type="hidden" name="response_type" value="{{.ResponseType}}">
<input type="hidden" name="scope" value="{{.Scope}}">
<input type="hidden" name="nonce" value="{{.Nonce}}">
<input type="hidden" name="state" value="{{.State}}">
<label for="email">E-mail address</label>
<input type="email" id="email" name="email" required autocomplete="email" autofocus value="{{.Email}}"{{if .Error}} aria-invalid="true" aria-describedby="email-error"{{end}}>
{{if .Error}}<p class="error" id="email-error" role="alert">{{.Error}}</p>
{{end}}<button type="submit" id="signin">Continue</button>
</form>
</main>
</body>
</html>
`))

var errorTemplate = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Development sign-in: request refused</title>
` + pageStyle + `
</head>
<body>
<main>
<h1>Request refused</h1>
<p class="error">{{.}}</p>
<p class="meta">This is the local development identity provider, not a real one. Check the client_id and the registered redirect URIs of the application that sent you here.</p>
</main>
</body>
</html>
`))
