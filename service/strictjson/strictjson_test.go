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

type deep struct {
	X string `json:"x"`
}

type middle struct {
	deep
	X int `json:"x"`
}

// twin and twin2 both declare y at one depth, untagged: encoding/json
// drops the name.
type twin struct{ Y int }
type twin2 struct{ Y string }

type policy struct {
	middle
	twin
	twin2
	Count       json.Number       `json:"count"`
	Quoted      int64             `json:"quoted,string"`
	Total       *float64          `json:"total,omitempty,string"`
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
		{"bytes, floats, structs", `{"key":true,"rate":"fast","home":"here"}`, "", map[string]string{
			"key": "must be a base64 string", "rate": "must be a number", "home": "must be an object"}},
		{"bytes as numbers", `{"key":[1,2]}`, "", nil},
		{"bytes out of range", `{"key":[1,256]}`, "", map[string]string{"key[1]": "is out of range"}},
		{"json.Number and ,string", `{"count":12,"quoted":"12","total":"7"}`, "", nil},
		{"json.Number as a string", `{"count":"12"}`, "", nil},
		{",string given a number", `{"quoted":12,"count":true}`, "", map[string]string{"quoted": "must be a string holding the value", "count": "must be a number"}},
		{"the shallowest field wins", `{"x":5}`, "", nil},
		{"the shallowest field's type", `{"x":"five"}`, "", map[string]string{"x": "must be an integer"}},
		{"ambiguous at one depth", `{"y":1}`, "", map[string]string{"y": "unknown field"}},
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
		`{"key":[1,2]}`, `{"x":5}`, `{"x":"five"}`, `{"y":1}`, `{"count":"12","quoted":"3"}`, `{"Y":1,"y":2}`,
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
