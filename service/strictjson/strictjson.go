// Package strictjson names everything wrong with a JSON request body at
// once: every member the Go type it decodes into does not declare, and every
// value of another JSON type than its field's, each by its path
// ("address.line3", "items[1].amount", "policy.spendingLimits.daily").
//
// encoding/json stops at the first problem: an unknown member hides a wrong
// type next to it, and a second unknown member hides behind the first. An
// integrator fixing a request one field per round trip asked for all of them
// (facts §9, #764). The HTTP layer uses it for request bodies and the domain
// for the documents it decodes itself (an agent's policy), so both answer
// the same way.
package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"paywallet/shared/wire"
)

// Problems names the problems of body as a value of v's type (v is what
// would be passed to json.Unmarshal), paths prefixed with prefix and a dot
// when prefix is not empty. It is empty when body is not JSON at all (the
// caller reports the syntax error) or when every member is known and of its
// field's JSON type. Values the type leaves open (interfaces, json.RawMessage,
// types that decode themselves) are not looked into; null is accepted
// anywhere, as encoding/json leaves the field alone.
func Problems(body []byte, v any, prefix string) []wire.FieldError {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return nil
	}
	var out []wire.FieldError
	walk(reflect.TypeOf(v), doc, prefix, &out)
	return out
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// root names the whole document in a message when there is no prefix.
func root(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

func walk(t reflect.Type, doc any, path string, out *[]wire.FieldError) {
	if t == nil || doc == nil {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		if _, ok := doc.(string); !ok {
			*out = append(*out, wire.FieldError{Field: root(path), Message: "must be a string"})
		}
		return
	}
	bad := func(message string) { *out = append(*out, wire.FieldError{Field: root(path), Message: message}) }
	switch t.Kind() {
	case reflect.Interface:
	case reflect.String:
		if _, ok := doc.(string); !ok {
			bad("must be a string")
		}
	case reflect.Bool:
		if _, ok := doc.(bool); !ok {
			bad("must be true or false")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := doc.(json.Number)
		if !ok {
			bad("must be an integer")
		} else if _, err := strconv.ParseInt(string(n), 10, t.Bits()); err != nil {
			bad(integerMessage(n))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := doc.(json.Number)
		if !ok {
			bad("must be a non-negative integer")
		} else if _, err := strconv.ParseUint(string(n), 10, t.Bits()); err != nil {
			bad(integerMessage(n))
		}
	case reflect.Float32, reflect.Float64:
		n, ok := doc.(json.Number)
		if !ok {
			bad("must be a number")
		} else if _, err := strconv.ParseFloat(string(n), t.Bits()); err != nil {
			bad("is out of range")
		}
	case reflect.Struct:
		obj, ok := doc.(map[string]any)
		if !ok {
			bad("must be an object")
			return
		}
		fields := fieldsOf(t)
		for name, member := range obj {
			ft, known := fields[name]
			if !known {
				// encoding/json matches names case-insensitively.
				for k, kt := range fields {
					if strings.EqualFold(k, name) {
						ft, known = kt, true
						break
					}
				}
			}
			if !known {
				*out = append(*out, wire.FieldError{Field: join(path, name), Message: "unknown field"})
				continue
			}
			walk(ft, member, join(path, name), out)
		}
	case reflect.Map:
		obj, ok := doc.(map[string]any)
		if !ok {
			bad("must be an object")
			return
		}
		for name, member := range obj {
			walk(t.Elem(), member, join(path, name), out)
		}
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			if _, ok := doc.(string); !ok {
				bad("must be a base64 string")
			}
			return
		}
		items, ok := doc.([]any)
		if !ok {
			bad("must be an array")
			return
		}
		for i, item := range items {
			walk(t.Elem(), item, root(path)+"["+strconv.Itoa(i)+"]", out)
		}
	}
}

// integerMessage says why n does not fit its integer field: written as a
// fraction or with an exponent (encoding/json takes neither), or out of the
// field's range.
func integerMessage(n json.Number) string {
	if strings.ContainsAny(string(n), ".eE") {
		return "must be a whole number, written without a fraction or exponent"
	}
	return "is out of range"
}

// fieldsOf maps the JSON member names of struct type t to their types,
// those of embedded structs included (the outer name wins, as in
// encoding/json).
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for k, v := range fieldsOf(et) {
					if _, dup := out[k]; !dup {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
