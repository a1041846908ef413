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
	"slices"
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
	numberType      = reflect.TypeFor[json.Number]()
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
	if t == numberType {
		// json.Number takes a number, or a string holding one.
		switch doc.(type) {
		case json.Number, string:
		default:
			bad("must be a number")
		}
		return
	}
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
			f, known := fields.lookup(name)
			if !known {
				*out = append(*out, wire.FieldError{Field: join(path, name), Message: "unknown field"})
				continue
			}
			if f.quoted {
				// `json:",string"`: the value is a JSON string holding it.
				if _, ok := member.(string); !ok && member != nil {
					*out = append(*out, wire.FieldError{Field: join(path, name), Message: "must be a string holding the value"})
				}
				continue
			}
			walk(f.typ, member, join(path, name), out)
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
		items, ok := doc.([]any)
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			// Bytes: base64 text, or (as encoding/json also takes) an
			// array of numbers.
			if _, text := doc.(string); !text && !ok {
				bad("must be a base64 string")
				return
			}
		} else if !ok {
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

// field is a JSON member of a struct type.
type field struct {
	name   string
	typ    reflect.Type
	index  []int // the path of field indexes, through embedded structs
	tagged bool  // named by a json tag
	quoted bool  // `json:",string"` on a kind the option applies to
}

// fields are a struct type's members in encoding/json's order (by index
// path).
type fields []field

// lookup finds the member a JSON name decodes into as encoding/json does:
// the exact name, else the first member (in field order) whose name matches
// without regard to case.
func (fs fields) lookup(name string) (field, bool) {
	for _, f := range fs {
		if f.name == name {
			return f, true
		}
	}
	for _, f := range fs {
		if strings.EqualFold(f.name, name) {
			return f, true
		}
	}
	return field{}, false
}

// fieldsOf is the JSON members of struct type t by encoding/json's rules:
// untagged embedded structs are flattened, breadth first; of several
// members with one name, the shallowest wins, and at equal depth the one
// with a json tag, if it is the only one (otherwise none does, and the name
// is unknown).
func fieldsOf(t reflect.Type) fields {
	type level struct {
		typ   reflect.Type
		index []int
	}
	var all []field
	visited := map[reflect.Type]bool{}
	for next := []level{{typ: t}}; len(next) > 0; {
		current := next
		next = nil
		for _, l := range current {
			if visited[l.typ] {
				continue
			}
			visited[l.typ] = true
			for i := range l.typ.NumField() {
				sf := l.typ.Field(i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if sf.Anonymous {
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				index := append(slices.Clone(l.index), i)
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					next = append(next, level{typ: ft, index: index})
					continue
				}
				f := field{name: name, typ: sf.Type, index: index, tagged: name != ""}
				if name == "" {
					f.name = sf.Name
				}
				if slices.Contains(strings.Split(opts, ","), "string") {
					switch ft.Kind() {
					case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
						reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
						reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
						f.quoted = true
					}
				}
				all = append(all, f)
			}
		}
	}
	// Dominance: per name, the shallowest; at equal depth, the only tagged.
	byName := map[string][]field{}
	for _, f := range all {
		byName[f.name] = append(byName[f.name], f)
	}
	var out fields
	for _, group := range byName {
		depth := len(group[0].index)
		for _, f := range group {
			depth = min(depth, len(f.index))
		}
		var shallow, tagged []field
		for _, f := range group {
			if len(f.index) == depth {
				shallow = append(shallow, f)
				if f.tagged {
					tagged = append(tagged, f)
				}
			}
		}
		switch {
		case len(shallow) == 1:
			out = append(out, shallow[0])
		case len(tagged) == 1:
			out = append(out, tagged[0])
		}
	}
	slices.SortFunc(out, func(a, b field) int { return slices.Compare(a.index, b.index) })
	return out
}
