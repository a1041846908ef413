package accountrules

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"paywallet/shared/wire"
)

// Messages shared by every level.
const (
	msgRequired = "required"
	msgUnknown  = "unknown field"
	msgString   = "must be a string"
	msgObject   = "must be an object"
	msgBool     = "must be a boolean"
	msgText     = "must not contain control characters or invalid UTF-8"
)

// report collects the problems of one body.
type report struct {
	errs []wire.FieldError
}

func (r *report) add(field, message string, c *wire.FieldConstraint) {
	r.errs = append(r.errs, wire.FieldError{Field: field, Constraint: c, Message: message})
}

// result sorts the problems by field, then message, so that the same body
// always gives the same list; nil means no problem.
func (r *report) result() []wire.FieldError {
	if len(r.errs) == 0 {
		return nil
	}
	sortErrors(r.errs)
	return r.errs
}

// sortErrors sorts errs by field, then message, keeping the order of equal
// ones: a bottom-up merge sort, O(n log n) like slices.SortStableFunc, whose
// instantiation for wire.FieldError would cost the wasm module several
// kilobytes.
func sortErrors(errs []wire.FieldError) {
	src, dst := errs, make([]wire.FieldError, len(errs))
	for width := 1; width < len(errs); width *= 2 {
		for lo := 0; lo < len(errs); lo += 2 * width {
			mid, hi := min(lo+width, len(errs)), min(lo+2*width, len(errs))
			i, j := lo, mid
			for k := lo; k < hi; k++ {
				if j < hi && (i == mid || errorLess(&src[j], &src[i])) {
					dst[k] = src[j]
					j++
				} else {
					dst[k] = src[i]
					i++
				}
			}
		}
		src, dst = dst, src
	}
	copy(errs, src)
}

func errorLess(a, b *wire.FieldError) bool {
	if a.Field != b.Field {
		return a.Field < b.Field
	}
	return a.Message < b.Message
}

// join makes the dot path of a member.
func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// unknown reports every member of m that allowed does not accept. Extra, if
// not nil, gives a specific message for a member (or "" for the default).
func (r *report) unknown(m map[string]any, path string, allowed func(string) bool, extra func(string) string) {
	for k := range m {
		if allowed(k) {
			continue
		}
		msg := msgUnknown
		if extra != nil {
			if s := extra(k); s != "" {
				msg = s
			}
		}
		r.add(join(path, k), msg, nil)
	}
}

func has(m map[string]any, name string) bool {
	_, ok := m[name]
	return ok
}

// object reads member name of m as an object. ok is false when it is absent
// (reported if required) or not an object (reported).
func (r *report) object(m map[string]any, path, name string, required bool) (map[string]any, bool) {
	v, present := m[name]
	if !present {
		if required {
			r.add(join(path, name), msgRequired, nil)
		}
		return nil, false
	}
	o, ok := v.(map[string]any)
	if !ok {
		r.add(join(path, name), msgObject, nil)
		return nil, false
	}
	return o, true
}

// boolean checks an optional or required boolean member.
func (r *report) boolean(m map[string]any, path, name string, required bool) {
	v, present := m[name]
	if !present {
		if required {
			r.add(join(path, name), msgRequired, nil)
		}
		return
	}
	if _, ok := v.(bool); !ok {
		r.add(join(path, name), msgBool, nil)
	}
}

// str checks member name of m against ru. It returns the value and whether it
// is present and valid; a problem is reported once, for the first rule broken.
func (r *report) str(m map[string]any, path, name string, required bool, ru *rule) (string, bool) {
	v, present := m[name]
	if !present {
		if required {
			r.add(join(path, name), msgRequired, nil)
		}
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		r.add(join(path, name), msgString, nil)
		return "", false
	}
	if msg, c := ru.check(s); msg != "" {
		r.add(join(path, name), msg, c)
		return s, false
	}
	return s, true
}

// rule is the check of one string value. The parts run in this order and the
// first one broken is the one reported: length, enum, pattern, plain text
// (no control characters; not for enums), extra.
type rule struct {
	min, max int               // length bounds in characters (runes); max 0 = no length rule
	enum     []string          // allowed values
	pattern  string            // the JavaScript regular expression of match, for the FieldConstraint
	match    func(string) bool // the pattern, written out
	want     string            // message when match fails, e.g. "must be 9 digits"
	extra    func(string) (string, *wire.FieldConstraint)

	// For the form: how it shows the enum's values, and the discovery list
	// (GET /discoveries?country=&currency=) whose bankName the value must be.
	choices []choice
	banks   *bankList
}

// bankList names a discovery list: country "" is every country of the currency.
type bankList struct{ country, currency string }

func (ru *rule) check(s string) (string, *wire.FieldConstraint) {
	if ru.max > 0 {
		n := utf8.RuneCountInString(s)
		if n < ru.min || n > ru.max {
			return lengthMessage(ru.min, ru.max), &wire.FieldConstraint{MinLength: intp(ru.min), MaxLength: intp(ru.max)}
		}
	}
	if ru.enum != nil && !slices.Contains(ru.enum, s) {
		return "must be one of " + strings.Join(ru.enum, ", "), &wire.FieldConstraint{Enum: slices.Clone(ru.enum)}
	}
	if ru.match != nil && !ru.match(s) {
		return ru.want, &wire.FieldConstraint{Pattern: ru.pattern}
	}
	if ru.enum == nil && !plainText(s) {
		return msgText, nil
	}
	if ru.extra != nil {
		return ru.extra(s)
	}
	return "", nil
}

func intp(n int) *int { return &n }

func lengthMessage(min, max int) string {
	if min == max {
		return "must be exactly " + strconv.Itoa(min) + " characters long"
	}
	return "must be " + strconv.Itoa(min) + " to " + strconv.Itoa(max) + " characters long"
}

// plainText reports whether s is valid UTF-8 without C0 or C1 control
// characters (tab and newline included: every text field here is one line).
func plainText(s string) bool {
	for _, c := range s {
		if c == utf8.RuneError || c < 0x20 || (c >= 0x7f && c < 0xa0) {
			return false
		}
	}
	return true
}
