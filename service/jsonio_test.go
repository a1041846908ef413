package service

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"paywallet/shared/wire"
)

// TestDecodeNamesEveryUnknownField: one answer names every member the
// request type does not declare, nested ones by their path; values the type
// leaves open are not looked into.
func TestDecodeNamesEveryUnknownField(t *testing.T) {
	type inner struct {
		Line1 string `json:"line1"`
	}
	type embedded struct {
		Region string `json:"region"`
	}
	type request struct {
		embedded
		Name    string          `json:"name"`
		Address *inner          `json:"address"`
		Items   []inner         `json:"items"`
		Open    map[string]any  `json:"open"`
		Raw     json.RawMessage `json:"raw"`
		Any     any             `json:"any"`
		skipped string
	}
	for _, tc := range []struct {
		name, body string
		want       []string // nil: decodes
	}{
		{"known", `{"name":"a","region":"US","address":{"line1":"x"},"items":[{"line1":"y"}],"open":{"z":1},"raw":{"q":1},"any":{"r":2}}`, nil},
		{"case-insensitive", `{"NAME":"a"}`, nil},
		{"one", `{"name":"a","colour":"red"}`, []string{"colour"}},
		{"several", `{"colour":"red","size":1,"name":"a"}`, []string{"colour", "size"}},
		{"nested", `{"address":{"line1":"x","line3":"y"},"extra":true}`, []string{"address.line3", "extra"}},
		{"in a list", `{"items":[{"line1":"a"},{"line1":"b","x":1}]}`, []string{"items[1].x"}},
		{"unexported", `{"skipped":"x"}`, []string{"skipped"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", strings.NewReader(tc.body))
			var v request
			err := decodeJSON(r, []byte(tc.body), &v, false)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			e, ok := err.(*Error)
			if !ok || e.Status != 400 || e.Code != "INVALID_INPUT" {
				t.Fatalf("err = %v, want 400 INVALID_INPUT", err)
			}
			var got []string
			for _, fe := range e.Details["errors"].([]wire.FieldError) {
				if fe.Message != "unknown field" {
					t.Errorf("%s: %q", fe.Field, fe.Message)
				}
				got = append(got, fe.Field)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("named %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDecodeRefusesTextAfterTheObject: a body is exactly one JSON object;
// text after it (a stray "}" included, which json.Decoder.More does not
// report) is refused. Before, `{…}}junk` was accepted and applied.
func TestDecodeRefusesTextAfterTheObject(t *testing.T) {
	for _, body := range []string{`{"name":"a"}}junk`, `{"name":"a"}]`, `{"name":"a"} {"name":"b"}`, `{"name":"a"}x`} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		var v struct {
			Name string `json:"name"`
		}
		err := decodeJSON(r, []byte(body), &v, false)
		if e, ok := err.(*Error); !ok || e.Status != 400 || e.Code != "INVALID_REQUEST_FORMAT" {
			t.Errorf("%s: %v, want 400 INVALID_REQUEST_FORMAT", body, err)
		}
	}
	for _, body := range []string{`{"name":"a"}`, " {\"name\":\"a\"} \n"} {
		var v struct {
			Name string `json:"name"`
		}
		if err := decodeJSON(httptest.NewRequest("POST", "/", strings.NewReader(body)), []byte(body), &v, false); err != nil || v.Name != "a" {
			t.Errorf("%q: %v", body, err)
		}
	}
}
