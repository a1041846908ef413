package accountrules

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzValidateCreate feeds JSON bodies, decoded as the service decodes them,
// to ValidateCreate: it never panics, never changes its input, answers the
// same twice, sorts its answer, names only paths under the body's members,
// and a body it accepts is still accepted after a JSON round trip.
func FuzzValidateCreate(f *testing.F) {
	for _, k := range baseKinds {
		b, err := json.Marshal(base(k))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, k := range []string{"NGN_ACCOUNT", "EUR_ACCOUNT", "AED_ACCOUNT"} {
		body := base(k)
		set(body, ben(""), business("NG"))
		b, _ := json.Marshal(body)
		f.Add(b)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"currency":null,"accountInfo":{"accountType":"COP_ACCOUNT","accountNumber":1,"phoneNumber":"+57","beneficiary":[]}}`))
	f.Add([]byte(`{"currency":"XOF","accountInfo":{"accountType":"XOF_ACCOUNT","phoneNumber":"+2250701234567","provider":"WAVE","region":"SN","beneficiary":{"beneficiaryType":"BUSINESS","businessInfo":{}}},"x.y":1}`))

	f.Fuzz(func(t *testing.T, data []byte) {
		var body map[string]any
		if json.Unmarshal(data, &body) != nil {
			return
		}
		before, _ := json.Marshal(body)
		errs := ValidateCreate(body)
		after, _ := json.Marshal(body)
		if !bytes.Equal(before, after) {
			t.Fatalf("ValidateCreate changed its input")
		}
		if again := ValidateCreate(deepCopy(body).(map[string]any)); !reflect.DeepEqual(errs, again) {
			t.Fatalf("two answers:%s\nand%s", dump(errs), dump(again))
		}
		if !slices.IsSortedFunc(errs, func(a, b wireError) int { return compareErrors(a, b) }) {
			t.Fatalf("not sorted:%s", dump(errs))
		}
		for _, e := range errs {
			if e.Message == "" {
				t.Errorf("%s: empty message", e.Field)
			}
			if !pathUnderBody(e.Field, body) {
				t.Errorf("path %q is under no member of the body", e.Field)
			}
		}
		if errs == nil {
			b, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			var back map[string]any
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if again := ValidateCreate(back); again != nil {
				t.Fatalf("accepted body refused after a round trip:%s", dump(again))
			}
		}
		// Numbers as json.Number (a string type other than string) are refused
		// like any non-string, without panics.
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var withNumbers map[string]any
		if d.Decode(&withNumbers) == nil {
			ValidateCreate(withNumbers)
		}
	})
}

// pathUnderBody: a known top-level member, a path under one, or an unknown
// member of the body reported as such.
func pathUnderBody(path string, body map[string]any) bool {
	for _, k := range topLevel {
		if path == k || strings.HasPrefix(path, k+".") {
			return true
		}
	}
	_, ok := body[path]
	return ok
}

// FuzzCalendarDate: calendarDate agrees with time.Parse(time.DateOnly), which
// it replaces to keep the general layout parser out of the wasm module.
func FuzzCalendarDate(f *testing.F) {
	for _, s := range []string{"2024-02-29", "2023-02-29", "1900-01-01", "0000-01-01", "2000-13-01", "2000-00-10",
		"2000-01-00", "2000-01-32", "2000-1-01", "20000-01-01", "2000/01/01", "2000-01-0a", "+200-01-01", "", "2000-04-31"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := calendarDate(s)
		want, err := time.Parse(time.DateOnly, s)
		if ok != (err == nil) || (ok && !got.Equal(want)) {
			t.Fatalf("calendarDate(%q) = %v, %v; time.Parse: %v, %v", s, got, ok, want, err)
		}
	})
}
