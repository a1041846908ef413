package web

import (
	"encoding/json"
	"testing"

	"paywallet/shared/accountrules"
)

// configFacts is what GET /api/config carries of shared/accountrules
// (currencies, accountTypes), as ",…" members for the fake config's JSON.
var configFacts = func() string {
	b, err := json.Marshal(map[string]any{"currencies": accountrules.Currencies(), "accountTypes": accountrules.Types()})
	if err != nil {
		panic(err)
	}
	return "," + string(b[1:len(b)-1])
}()

// accountFormJSON is the wasm module's accountForm() answer, for the
// page's wallet stub.
var accountFormJSON = func() string {
	b, err := json.Marshal(accountrules.Form())
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// currencyFacts is accountrules.Currencies() as a JavaScript array, which
// the page gives format.js at start (setCurrencies) from GET /api/config.
var currencyFacts = func() string {
	b, err := json.Marshal(accountrules.Currencies())
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// TestAccountFormMessages: every message key the module's form description
// names (labels, options, the types' names by TypeLabelKey) is in every
// catalogue, and the page's typeLabelKey is accountrules.TypeLabelKey.
func TestAccountFormMessages(t *testing.T) {
	t.Parallel()
	var keys []string
	var walk func(v any, key bool)
	walk = func(v any, key bool) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walk(e, k == "label")
			}
		case []any:
			for _, e := range v {
				walk(e, false)
			}
		case string:
			if key {
				keys = append(keys, v)
			}
		}
	}
	walk(accountrules.Form(), false)
	types := accountrules.AccountTypes()
	want := map[string]string{}
	for _, at := range types {
		want[at] = accountrules.TypeLabelKey(at)
	}
	if len(keys) < 60 {
		t.Fatalf("only %d label keys in the form: %q", len(keys), keys)
	}
	ctx := moduleTab(t)
	var out struct {
		Missing map[string][]string `json:"missing"`
		Labels  map[string]string   `json:"labels"`
	}
	inModules(t, ctx, map[string]any{"keys": keys, "types": types}, `
  const a = await import("/js/accounttypes.js");
  const missing = {};
  for (const language of i.LANGUAGES) {
    const messages = await i.loadCatalogue(language);
    missing[language] = input.keys.filter((k) => !Object.hasOwn(messages, k));
  }
  return { missing, labels: Object.fromEntries(input.types.map((t) => [t, a.typeLabelKey(t)])) };`, &out)
	for language, m := range out.Missing {
		if len(m) > 0 {
			t.Errorf("%s lacks %q", language, m)
		}
	}
	if len(out.Missing) < 2 {
		t.Errorf("catalogues checked: %v", out.Missing)
	}
	for at, key := range want {
		if out.Labels[at] != key {
			t.Errorf("typeLabelKey(%s) = %q, accountrules says %q", at, out.Labels[at], key)
		}
	}
}
