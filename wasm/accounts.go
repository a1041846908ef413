//go:build js && wasm

package main

import (
	"errors"
	"math"
	"strconv"
	"syscall/js"

	"paywallet/shared/accountrules"
	"paywallet/shared/wire"
)

// Limits on the body handed to validateAccountInfo. A create body is a few
// dozen values; these only stop a page (or a cycle) from making the walk
// unbounded.
const (
	maxBodyDepth  = 32      // nested objects and arrays, the body included
	maxBodyValues = 10000   // values of every kind, the body included
	maxBodyBytes  = 1 << 20 // UTF-8 bytes of all strings and member names
	maxRuleArg    = 64      // requiredBeneficiaryFields arguments
)

var (
	arrayConstructor = js.Global().Get("Array")
	objectToString   = js.Global().Get("Object").Get("prototype").Get("toString")
)

// validateAccountInfo(body) -> [{field, message, constraint?}]
//
// body is the POST /customers/external-accounts body as a plain object. The
// result is what the service would answer in details.errors for the JSON of
// that object: an empty array when it is valid.
func (w *wallet) validateAccountInfo(args []js.Value) (any, error) {
	if err := checkCount(args, "body"); err != nil {
		return nil, err
	}
	body := args[0]
	if t := jsType(body); t != "object" {
		return nil, errors.New("body must be an object, got " + t)
	}
	if arrayConstructor.Call("isArray", body).Bool() {
		return nil, errors.New("body must be an object, got array")
	}
	c := &converter{}
	tree, err := c.value(body, "body", 0)
	if err != nil {
		return nil, err
	}
	return fieldErrors(accountrules.ValidateCreate(tree.(map[string]any))), nil
}

// accountTypes() -> [string], the 21 accountType values in the spec's order
func (w *wallet) accountTypes(args []js.Value) (any, error) {
	if err := checkCount(args); err != nil {
		return nil, err
	}
	return stringList(accountrules.AccountTypes()), nil
}

// accountForm() -> the add-recipient form's description (accountrules.Form):
// {types: [{accountType, label, currency, …, fields | shapes}], currency,
// holderType, individual, document, business, address}, every label a
// message key. js.ValueOf builds it from the generic tree: no JSON.
func (w *wallet) accountForm(args []js.Value) (any, error) {
	if err := checkCount(args); err != nil {
		return nil, err
	}
	return accountrules.Form(), nil
}

// requiredBeneficiaryFields(accountType, currency, beneficiaryType) -> [string]
//
// The paths are relative to accountInfo.beneficiary; an unknown type, a
// SPARK_WALLET or an unknown beneficiaryType gives an empty array.
func (w *wallet) requiredBeneficiaryFields(args []js.Value) (any, error) {
	names := []string{"accountType", "currency", "beneficiaryType"}
	if err := checkCount(args, names...); err != nil {
		return nil, err
	}
	var s [3]string
	for i, name := range names {
		v, err := stringArg(args[i], name, maxRuleArg, false)
		if err != nil {
			return nil, err
		}
		s[i] = v
	}
	return stringList(accountrules.RequiredBeneficiaryFields(s[0], s[1], s[2])), nil
}

// converter turns a JavaScript value into the generic tree that
// encoding/json would decode from JSON.stringify of the same value:
// map[string]any, []any, string, float64, bool and nil. It follows
// JSON.stringify where the two can agree: undefined members are left out,
// undefined array elements and non-finite numbers become null. It refuses
// what JSON.stringify would drop silently or throw on (functions, symbols,
// bigints), so the page learns about them instead of the service seeing a
// different body. toJSON methods are not called: a Date becomes {}.
type converter struct {
	values int // values converted so far
	bytes  int // string and member-name bytes so far
}

func (c *converter) value(v js.Value, path string, depth int) (any, error) {
	c.values++
	if c.values > maxBodyValues {
		return nil, errors.New("body has more than " + strconv.Itoa(maxBodyValues) + " values")
	}
	switch t := jsType(v); t {
	case "undefined", "null":
		return nil, nil
	case "boolean":
		return v.Bool(), nil
	case "number":
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, nil // JSON.stringify writes null
		}
		return f, nil
	case "string":
		return c.str(v)
	case "object":
		if depth >= maxBodyDepth {
			return nil, errors.New(path + " is nested deeper than " + strconv.Itoa(maxBodyDepth) + " levels")
		}
		if arrayConstructor.Call("isArray", v).Bool() {
			return c.array(v, path, depth+1)
		}
		return c.object(v, path, depth+1)
	default:
		return nil, errors.New(path + " is a " + t + ", which JSON cannot carry")
	}
}

func (c *converter) array(v js.Value, path string, depth int) (any, error) {
	n := v.Length()
	if n > maxBodyValues-c.values {
		return nil, errors.New("body has more than " + strconv.Itoa(maxBodyValues) + " values")
	}
	out := make([]any, n)
	for i := range out {
		e, err := c.value(v.Index(i), path+"["+strconv.Itoa(i)+"]", depth)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func (c *converter) object(v js.Value, path string, depth int) (any, error) {
	keys := objectConstructor.Call("keys", v)
	n := keys.Length()
	if n > maxBodyValues-c.values {
		return nil, errors.New("body has more than " + strconv.Itoa(maxBodyValues) + " values")
	}
	out := make(map[string]any, n)
	for i := 0; i < n; i++ {
		k, err := c.str(keys.Index(i))
		if err != nil {
			return nil, err
		}
		ks := k.(string)
		member := v.Get(ks)
		if member.IsUndefined() {
			continue // JSON.stringify leaves the member out
		}
		e, err := c.value(member, path+"."+ks, depth)
		if err != nil {
			return nil, err
		}
		out[ks] = e
	}
	return out, nil
}

// str copies a JavaScript string into Go, within the byte budget.
func (c *converter) str(v js.Value) (any, error) {
	// Measure before copying, as stringArg does: UTF-8 bytes >= UTF-16 units.
	if objectConstructor.Invoke(v).Get("length").Int() > maxBodyBytes-c.bytes {
		return nil, errBodyTooLong
	}
	s := v.String()
	c.bytes += len(s)
	if c.bytes > maxBodyBytes {
		return nil, errBodyTooLong
	}
	return s, nil
}

var errBodyTooLong = errors.New("body holds more than " + strconv.Itoa(maxBodyBytes) + " bytes of text")

// jsType returns the typeof of v as a string. js.Value.Type panics on a
// bigint, so bigints are told apart first through Object.prototype.toString.
func jsType(v js.Value) string {
	if objectToString.Call("call", v).String() == "[object BigInt]" {
		return "bigint"
	}
	switch v.Type() {
	case js.TypeUndefined:
		return "undefined"
	case js.TypeNull:
		return "null"
	case js.TypeBoolean:
		return "boolean"
	case js.TypeNumber:
		return "number"
	case js.TypeString:
		return "string"
	case js.TypeSymbol:
		return "symbol"
	case js.TypeFunction:
		return "function"
	default:
		return "object"
	}
}

// fieldErrors converts validator results into values js.ValueOf accepts:
// {field, message, constraint?: {format?, pattern?, enum?, minLength?,
// maxLength?}}, as the service's JSON writes them (empty members omitted).
func fieldErrors(errs []wire.FieldError) []any {
	out := make([]any, len(errs))
	for i, e := range errs {
		m := map[string]any{"field": e.Field, "message": e.Message}
		if c := e.Constraint; c != nil {
			cm := map[string]any{}
			if c.Format != "" {
				cm["format"] = c.Format
			}
			if c.Pattern != "" {
				cm["pattern"] = c.Pattern
			}
			if len(c.Enum) > 0 {
				cm["enum"] = stringList(c.Enum)
			}
			if c.MinLength != nil {
				cm["minLength"] = *c.MinLength
			}
			if c.MaxLength != nil {
				cm["maxLength"] = *c.MaxLength
			}
			m["constraint"] = cm
		}
		out[i] = m
	}
	return out
}

// stringList returns s as a []any for js.ValueOf; nil gives an empty array.
func stringList(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
