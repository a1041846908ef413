package accountrules

import "testing"

// BenchmarkValidateCreate measures the check every POST
// /customers/external-accounts runs (in the service, again in the BFF, and
// in the browser): valid bodies of three shapes, and a body with several
// problems, which also builds the error list.
func BenchmarkValidateCreate(b *testing.B) {
	bad := base("USD_ACCOUNT")
	info := bad["accountInfo"].(map[string]any)
	info["routingNumber"], info["accountNumber"] = "12", "x"
	delete(info["beneficiary"].(map[string]any), "fullName")
	for _, bc := range []struct {
		name string
		body map[string]any
	}{
		{"USD_ACCOUNT", base("USD_ACCOUNT")},
		{"MXN_ACCOUNT", base("MXN_ACCOUNT")},
		{"BRL_ACCOUNT", base("BRL_ACCOUNT")},
		{"invalid", bad},
	} {
		wantErrs := bc.name == "invalid"
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if errs := ValidateCreate(bc.body); (len(errs) > 0) != wantErrs {
					b.Fatalf("ValidateCreate = %v", errs)
				}
			}
		})
	}
}
