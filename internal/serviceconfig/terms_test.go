package serviceconfig

import (
	"reflect"
	"testing"

	"paywallet/service"
)

func TestEndUserTermsFlag(t *testing.T) {
	for in, want := range map[string][]service.EndUserTerms{
		"": nil,
		" V1=https://t.example/v1 , V2=https://t.example/v2?x=1 ": {
			{Version: "V1", URL: "https://t.example/v1"}, {Version: "V2", URL: "https://t.example/v2?x=1"}},
	} {
		got, err := (&Options{EndUserTerms: in}).endUserTerms()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"V1", "=https://t.example", "V1="} {
		if _, err := (&Options{EndUserTerms: bad}).endUserTerms(); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
