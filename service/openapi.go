package service

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// openapiYAML is the OpenAPI document of this interface, written by hand
// (openapi.yaml). The tests keep it true: every request they send goes
// through a validator built from it (openapi_test.go), the route table and
// the document must list the same operations, and each route line's
// status, permission (the document's x-permission), the parameters its
// operation reads and its request type's fields must be the document's
// (openapi_routes_test.go).
//
//go:embed openapi.yaml
var openapiYAML []byte

// apiDocument is the document in both forms the service serves, made once
// from the embedded YAML: the JSON is the YAML loaded by kin-openapi and
// marshalled again, so the two cannot say different things.
type apiDocument struct {
	yaml, json []byte
	yamlTag    string // ETag of each form
	jsonTag    string
}

var loadAPIDocument = sync.OnceValues(func() (*apiDocument, error) {
	doc, err := parseAPIDocument(openapiYAML)
	if err != nil {
		return nil, err
	}
	j, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return &apiDocument{yaml: openapiYAML, json: j, yamlTag: etag(openapiYAML), jsonTag: etag(j)}, nil
})

// parseAPIDocument loads an OpenAPI document (YAML or JSON) without
// following references outside it.
func parseAPIDocument(b []byte) (*openapi3.T, error) {
	l := openapi3.NewLoader()
	l.IsExternalRefsAllowed = false
	l.Context = context.Background()
	return l.LoadFromData(b)
}

func etag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// serveDocument answers the OpenAPI document without credentials,
// cacheable for five minutes and revalidated by its ETag.
func (s *Service) serveDocument(asYAML bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		d, err := loadAPIDocument()
		if err != nil {
			return err
		}
		body, tag, ctype := d.json, d.jsonTag, "application/json"
		if asYAML {
			body, tag, ctype = d.yaml, d.yamlTag, "application/yaml"
		}
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("ETag", tag)
		if matchesETag(r.Header.Get("If-None-Match"), tag) {
			w.WriteHeader(http.StatusNotModified)
			return nil
		}
		w.Header().Set("Content-Type", ctype)
		_, _ = w.Write(body)
		return nil
	}
}

// matchesETag reports whether an If-None-Match header names tag (or is *).
func matchesETag(header, tag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == tag || t == "*" {
			return true
		}
	}
	return false
}
