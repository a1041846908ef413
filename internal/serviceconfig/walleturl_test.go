package serviceconfig

import (
	"flag"
	"io"
	"testing"
)

// TestWalletURLFlag: --wallet-url and WALLET_URL set Options.WalletURL
// (the flag over the environment); the service refuses one that is not
// an absolute http(s) URL when it starts (payments.New).
func TestWalletURLFlag(t *testing.T) {
	for _, c := range []struct {
		name, env string
		args      []string
		want      string
	}{
		{"none", "", nil, ""},
		{"environment", "https://env.example", nil, "https://env.example"},
		{"flag over environment", "https://env.example", []string{"--wallet-url", "https://flag.example/app"}, "https://flag.example/app"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("WALLET_URL", c.env)
			var o Options
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o.Register(fs)
			if err := fs.Parse(c.args); err != nil || o.WalletURL != c.want {
				t.Fatalf("WalletURL %q, %v; want %q", o.WalletURL, err, c.want)
			}
		})
	}
}
