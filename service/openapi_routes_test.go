package service

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestDocumentMatchesRouteLines: what each route line declares is what the
// document says of its operation, so neither can change alone. For every
// route: the documented success (the one 2xx answer, and 202 besides for a
// signed operation's challenge) is the line's status; the document's
// x-permission is the line's permission (platform routes only); every
// query parameter and path value the operation's arguments read is a
// documented parameter, and every documented query parameter is read; and
// the request body's top-level properties are the JSON fields of the
// operation's request type.
func TestDocumentMatchesRouteLines(t *testing.T) {
	e := newEnv(t)
	doc, err := testDocument()
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range e.svc.routes() {
		key := rt.method + " " + rt.path
		item := doc.Paths.Value(rt.path)
		if item == nil || item.GetOperation(rt.method) == nil {
			continue // TestDocumentCoversRouteTable names it
		}
		op := item.GetOperation(rt.method)
		perm, _ := op.Extensions["x-permission"].(string)
		if perm != rt.need.name {
			t.Errorf("%s: x-permission %q in the document, %q on the route line", key, perm, rt.need.name)
		}
		if rt.h != nil {
			continue // no operation: its answers are its own
		}
		var success []int
		for code := range op.Responses.Map() {
			if n, err := strconv.Atoi(code); err == nil && n >= 200 && n < 300 {
				success = append(success, n)
			}
		}
		sort.Ints(success)
		want := []int{rt.status}
		if rt.has(argSigned) {
			want = []int{http.StatusAccepted, rt.status}
			sort.Ints(want)
		}
		if !slices.Equal(success, want) {
			t.Errorf("%s: the document answers %v on success, the route line %v", key, success, want)
		}
		documented := map[string]bool{} // "query name", "path name"
		for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
			documented[p.Value.In+" "+p.Value.Name] = true
		}
		read := map[string]bool{}
		for _, a := range rt.args {
			switch a.kind {
			case argPath:
				read["path "+a.name] = true
			case argURL:
				for _, n := range urlNames(a.t, "query") {
					read["query "+n] = true
				}
				for _, n := range urlNames(a.t, "path") {
					read["path "+n] = true
				}
			}
		}
		for p := range read {
			if !documented[p] {
				t.Errorf("%s: the operation reads the %s parameter, which the document does not name", key, p)
			}
		}
		for p := range documented {
			if strings.HasPrefix(p, "query ") && !read[p] {
				t.Errorf("%s: the document names the %s parameter, which the operation does not read", key, p)
			}
		}
		checkBody(t, key, rt, op)
	}
}

// checkBody compares the document's request body with the operation's
// request type: the same top-level properties as its JSON fields, for a
// struct; none for an operation that reads no body.
func checkBody(t *testing.T, key string, rt route, op *openapi3.Operation) {
	var body reflect.Type
	for _, a := range rt.args {
		if a.kind == argBody || a.kind == argRaw {
			body = a.t
		}
	}
	var schema *openapi3.Schema
	if op.RequestBody != nil {
		if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			schema = mt.Schema.Value
		}
	}
	switch {
	case body == nil && schema != nil && len(schemaProperties(schema)) > 0:
		t.Errorf("%s: the document has a request body with %v; the operation reads none", key, schemaProperties(schema))
	case body == nil:
	case schema == nil:
		t.Errorf("%s: the operation reads a %v body, the document has none", key, body)
	case body.Kind() == reflect.Struct:
		got, want := schemaProperties(schema), jsonFields(body)
		if !slices.Equal(got, want) {
			t.Errorf("%s: the document's request body has %v, the request type %v has %v", key, got, body, want)
		}
	}
}

// schemaProperties are the top-level property names of a schema, those
// of its allOf, oneOf and anyOf members included (a request type is the
// union of its variants), and the members its x-refused extension names
// (read by the request type only to be refused by name), sorted.
func schemaProperties(s *openapi3.Schema) []string {
	var names []string
	for name := range s.Properties {
		names = append(names, name)
	}
	refused, _ := s.Extensions["x-refused"].([]any)
	for _, name := range refused {
		names = append(names, fmt.Sprint(name))
	}
	for _, refs := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
		for _, ref := range refs {
			names = append(names, schemaProperties(ref.Value)...)
		}
	}
	sort.Strings(names)
	return slices.Compact(names)
}

// jsonFields are the names encoding/json reads of a struct type, those of
// embedded structs included, sorted.
func jsonFields(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case name == "-" || (!f.IsExported() && !f.Anonymous):
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			names = append(names, jsonFields(f.Type)...)
		case name == "":
			names = append(names, f.Name)
		default:
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
