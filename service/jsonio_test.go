package service

import (
	"encoding/json"
	"maps"
	"net/http/httptest"
	"strings"
	"testing"

	"paywallet/shared/wire"
)

// TestDecodeNamesEveryProblem: one answer names every member the request
// type does not declare and every value of the wrong JSON type, nested ones
// by their path; values the type leaves open are not looked into. Before,
// a body with a wrong type and an unknown member named only the unknown one.
func TestDecodeNamesEveryProblem(t *testing.T) {
	type inner struct {
		Line1 string `json:"line1"`
	}
	type embedded struct {
		Region string `json:"region"`
	}
	type request struct {
		embedded
		Name    string          `json:"name"`
		Count   int32           `json:"count"`
		Amount  *int64          `json:"amount"`
		Paused  *bool           `json:"paused"`
		Address *inner          `json:"address"`
		Items   []inner         `json:"items"`
		Open    map[string]any  `json:"open"`
		Raw     json.RawMessage `json:"raw"`
		Any     any             `json:"any"`
		skipped string
	}
	const unknown = "unknown field"
	for _, tc := range []struct {
		name, body string
		want       map[string]string // nil: decodes
	}{
		{"known", `{"name":"a","region":"US","count":3,"amount":null,"paused":true,"address":{"line1":"x"},"items":[{"line1":"y"}],"open":{"z":1},"raw":{"q":1},"any":{"r":2}}`, nil},
		{"case-insensitive", `{"NAME":"a"}`, nil},
		{"one", `{"name":"a","colour":"red"}`, map[string]string{"colour": unknown}},
		{"several", `{"colour":"red","size":1,"name":"a"}`, map[string]string{"colour": unknown, "size": unknown}},
		{"nested", `{"address":{"line1":"x","line3":"y"},"extra":true}`, map[string]string{"address.line3": unknown, "extra": unknown}},
		{"in a list", `{"items":[{"line1":"a"},{"line1":"b","x":1}]}`, map[string]string{"items[1].x": unknown}},
		{"unexported", `{"skipped":"x"}`, map[string]string{"skipped": unknown}},
		{"type beside unknown", `{"name":1,"colour":"red"}`, map[string]string{"name": "must be a string", "colour": unknown}},
		{"every type", `{"name":true,"count":"3","amount":1.5,"paused":"yes","address":[],"items":{}}`, map[string]string{
			"name": "must be a string", "count": "must be an integer", "amount": "must be a whole number, written without a fraction or exponent",
			"paused": "must be true or false", "address": "must be an object", "items": "must be an array"}},
		{"out of range", `{"count":4294967296,"amount":9223372036854775808}`, map[string]string{"count": "is out of range", "amount": "is out of range"}},
		{"nested type", `{"address":{"line1":7},"items":[{"line1":"a"},{"line1":false}]}`, map[string]string{"address.line1": "must be a string", "items[1].line1": "must be a string"}},
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
			got := map[string]string{}
			for _, fe := range e.Details["errors"].([]wire.FieldError) {
				got[fe.Field] = fe.Message
			}
			if !maps.Equal(got, tc.want) {
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
