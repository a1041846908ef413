//go:build !js

package walletcrypto

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParseFlat(t *testing.T) {
	tests := []struct {
		name, in string
		want     flatObject // nil: must fail
	}{
		{"empty object", `{}`, flatObject{}},
		{"whitespace", " \t\r\n{ \"a\" :\n\"b\" , \"c\":\"d\" }\n", flatObject{{"a", "b"}, {"c", "d"}}},
		{"order kept", `{"z":"1","a":"2"}`, flatObject{{"z", "1"}, {"a", "2"}}},
		{"empty key and value", `{"":""}`, flatObject{{"", ""}}},
		{"short escapes", `{"k":"\"\\\/\b\f\n\r\t"}`, flatObject{{"k", "\"\\/\b\f\n\r\t"}}},
		{"unicode escape", `{"k":"\u0041\u00e9\u20AC"}`, flatObject{{"k", "Aé€"}}},
		{"nul escape", `{"k":"\u0000"}`, flatObject{{"k", "\x00"}}},
		{"surrogate pair", `{"k":"\ud83d\ude00"}`, flatObject{{"k", "😀"}}},
		{"raw UTF-8", `{"ké":"😀 \u2028"}`, flatObject{{"ké", "😀 \u2028"}}},
		{"escaped key", `{"a\u0062":"c"}`, flatObject{{"ab", "c"}}},

		{"empty input", ``, nil},
		{"array", `[]`, nil},
		{"string", `"a"`, nil},
		{"unterminated object", `{"a":"b"`, nil},
		{"trailing comma", `{"a":"b",}`, nil},
		{"leading comma", `{,"a":"b"}`, nil},
		{"missing colon", `{"a" "b"}`, nil},
		{"number value", `{"a":1}`, nil},
		{"null value", `{"a":null}`, nil},
		{"bool value", `{"a":true}`, nil},
		{"nested object", `{"a":{}}`, nil},
		{"array value", `{"a":[]}`, nil},
		{"unquoted key", `{a:"b"}`, nil},
		{"single quotes", `{'a':'b'}`, nil},
		{"duplicate key", `{"a":"b","a":"c"}`, nil},
		{"duplicate after unescape", `{"a":"b","\u0061":"c"}`, nil},
		{"data after object", `{"a":"b"}x`, nil},
		{"two objects", `{}{}`, nil},
		{"raw control char", "{\"a\":\"\x01\"}", nil},
		{"raw newline in string", "{\"a\":\"\n\"}", nil},
		{"unknown escape", `{"a":"\x41"}`, nil},
		{"short unicode escape", `{"a":"\u41"}`, nil},
		{"bad hex in escape", `{"a":"\u00g1"}`, nil},
		{"lone high surrogate", `{"a":"\ud83d"}`, nil},
		{"high surrogate then text", `{"a":"\ud83dx"}`, nil},
		{"high then high", `{"a":"\ud83d\ud83d"}`, nil},
		{"lone low surrogate", `{"a":"\ude00"}`, nil},
		{"invalid UTF-8", "{\"a\":\"\xff\"}", nil},
		{"UTF-8 surrogate", "{\"a\":\"\xed\xa0\x80\"}", nil},
		{"overlong UTF-8", "{\"a\":\"\xc0\xaf\"}", nil},
		{"unterminated string", `{"a":"b}`, nil},
		{"backslash at end", `{"a":"\`, nil},
		{"BOM", "\ufeff{}", nil},
		{"non-JSON whitespace", "{\v}", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlat([]byte(tt.in))
			if tt.want == nil {
				if err == nil || got != nil || !isErr(err, ErrMalformed) {
					t.Fatalf("parseFlat(%q) = %v, %v; want an error", tt.in, got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("parseFlat(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			// encoding/json agrees on the values.
			var m map[string]string
			if err := json.Unmarshal([]byte(tt.in), &m); err != nil || len(m) != len(got) {
				t.Fatalf("encoding/json: %v, %v", m, err)
			}
			for _, f := range got {
				if m[f.key] != f.value {
					t.Fatalf("encoding/json: %q = %q, we say %q", f.key, m[f.key], f.value)
				}
			}
		})
	}
}

func TestParseFlatTooManyMembers(t *testing.T) {
	o := flatObject{}
	for i := 0; i <= maxFields; i++ {
		o = append(o, field{string(rune('A' + i)), "v"})
	}
	if _, err := parseFlat(appendFlat(nil, o[:maxFields])); err != nil {
		t.Fatalf("%d members: %v", maxFields, err)
	}
	if _, err := parseFlat(appendFlat(nil, o)); err == nil {
		t.Fatalf("%d members accepted", len(o))
	}
}

func TestAppendFlat(t *testing.T) {
	tests := []struct {
		name string
		in   flatObject
		want string // as JavaScript's JSON.stringify writes it
	}{
		{"empty", flatObject{}, `{}`},
		{"plain", flatObject{{"otp_code", "123456"}, {"public_key", "02ab"}}, `{"otp_code":"123456","public_key":"02ab"}`},
		{"quote and backslash", flatObject{{"k", `a"b\c/d`}}, `{"k":"a\"b\\c/d"}`},
		{"short escapes", flatObject{{"k", "\b\f\n\r\t"}}, `{"k":"\b\f\n\r\t"}`},
		{"other controls lower-case hex", flatObject{{"k", "\x00\x01\x1f"}}, `{"k":"\u0000\u0001\u001f"}`},
		{"DEL and non-ASCII raw", flatObject{{"k", "\x7fé€😀\u2028<>&"}}, "{\"k\":\"\x7fé€😀\u2028<>&\"}"},
		{"invalid UTF-8", flatObject{{"k", "a\xffb"}}, `{"k":"a\ufffdb"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(appendFlat(nil, tt.in))
			if got != tt.want {
				t.Fatalf("appendFlat = %s, want %s", got, tt.want)
			}
			back, err := parseFlat([]byte(got))
			if err != nil {
				t.Fatal(err)
			}
			if tt.name != "invalid UTF-8" && !reflect.DeepEqual(back, tt.in) {
				t.Fatalf("parses back to %q", back)
			}
		})
	}
}
