// Package inproc connects an HTTP client to an http.Handler in the same
// process, without a socket. The wallet binary uses it to embed the payments
// service behind the BFF: the BFF still speaks HTTP (headers, status codes,
// bodies, Basic auth) exactly as it would to a remote service, so the
// embedded and the split deployment exercise the same code.
package inproc

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
)

// Transport is an http.RoundTripper that serves each request with Handler.
type Transport struct {
	Handler http.Handler
}

// RoundTrip runs the handler on a server-side copy of req and returns its
// buffered answer.
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	in := req.Clone(req.Context())
	in.Body = io.NopCloser(bytes.NewReader(body))
	in.ContentLength = int64(len(body))
	in.RequestURI = req.URL.RequestURI()
	in.RemoteAddr = "127.0.0.1:0"
	in.Host = req.URL.Host
	if in.Header == nil {
		in.Header = http.Header{}
	}

	rec := &recorder{header: http.Header{}}
	t.Handler.ServeHTTP(rec, in)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	rec.header.Set("Content-Length", strconv.Itoa(rec.body.Len()))
	return &http.Response{
		Status:        strconv.Itoa(rec.status) + " " + http.StatusText(rec.status),
		StatusCode:    rec.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rec.header,
		Body:          io.NopCloser(bytes.NewReader(rec.body.Bytes())),
		ContentLength: int64(rec.body.Len()),
		Request:       req,
	}, nil
}

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}
