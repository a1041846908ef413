package strictjson

import (
	"bytes"
	"encoding/json"
	"maps"
	"testing"
)

type address struct {
	Line1 string `json:"line1"`
}

type limits struct {
	Currency string `json:"currency"`
	Daily    *int64 `json:"dailyLimit"`
}

type policy struct {
	Permissions []string          `json:"permissions"`
	Limits      *limits           `json:"spendingLimits"`
	Rules       []limits          `json:"rules"`
	Tags        map[string]uint16 `json:"tags"`
	Key         []byte            `json:"key"`
	Rate        float32           `json:"rate"`
	Home        address           `json:"home"`
	Extra       json.RawMessage   `json:"extra"`
}

// TestProblems: every problem of a document, by path under the prefix.
func TestProblems(t *testing.T) {
	for _, tc := range []struct {
		name, body, prefix string
		want               map[string]string
	}{
		{"fine", `{"permissions":["A"],"spendingLimits":{"currency":"USD","dailyLimit":5},"rules":[],"tags":{"a":1},"key":"AQID","rate":1.5,"home":{"line1":"x"},"extra":[1,{"q":2}]}`, "", nil},
		{"nulls", `{"permissions":null,"spendingLimits":null,"rate":null,"home":null}`, "", nil},
		{"not JSON", `{"permissions":`, "", nil},
		{"prefixed paths", `{"spendingLimits":{"currency":"USD","daily":5,"dailyLimit":"5"},"colour":1}`, "policy", map[string]string{
			"policy.spendingLimits.daily": "unknown field", "policy.spendingLimits.dailyLimit": "must be an integer", "policy.colour": "unknown field"}},
		{"lists and maps", `{"permissions":["A",2],"rules":[{"currency":"USD"},{"x":1}],"tags":{"a":-1,"b":70000}}`, "", map[string]string{
			"permissions[1]": "must be a string", "rules[1].x": "unknown field", "tags.a": "is out of range", "tags.b": "is out of range"}},
		{"bytes, floats, structs", `{"key":[1,2],"rate":"fast","home":"here"}`, "", map[string]string{
			"key": "must be a base64 string", "rate": "must be a number", "home": "must be an object"}},
		{"not an object", `[1,2]`, "", map[string]string{"body": "must be an object"}},
		{"not an object, prefixed", `"x"`, "policy", map[string]string{"policy": "must be an object"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			for _, p := range Problems([]byte(tc.body), &policy{}, tc.prefix) {
				got[p.Field] = p.Message
			}
			if tc.want == nil {
				tc.want = map[string]string{}
			}
			if !maps.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// FuzzProblems: Problems never panics and never names a problem in a
// document that encoding/json (unknown members refused) decodes: it may
// only add names to a refusal, never refuse what decodes.
func FuzzProblems(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"permissions":["A"],"spendingLimits":{"currency":"USD","dailyLimit":5}}`,
		`{"tags":{"a":1},"key":"AQID","rate":1e3,"home":{"line1":"x"}}`, `{"rules":[{"x":1}]}`,
		`{"PERMISSIONS":["a"]}`, `{"permissions":null}`, `[]`, `1`, `{"rate":1e400}`, `{"tags":{"a":1.0}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		problems := Problems(body, &policy{}, "")
		if len(problems) == 0 {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		var v policy
		if err := dec.Decode(&v); err == nil {
			t.Fatalf("%s decodes, but Problems named %v", body, problems)
		}
	})
}
