package oidc

import (
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// jws builds a token from literal JSON texts, so tests control every byte.
func jws(header, payload string) string {
	return enc([]byte(header)) + "." + enc([]byte(payload)) + "." + enc([]byte("sig"))
}

const goodHeader = `{"alg":"RS256","kid":"k1","typ":"JWT"}`

func payload(extra string) string {
	return `{"iss":"https://issuer.example","sub":"u1","aud":"client","iat":1700000000,"exp":1700000600` + extra + `}`
}

func TestParse(t *testing.T) {
	good := jws(goodHeader, payload(`,"nonce":"n","email":"a@b.c","email_verified":true`))
	tests := []struct {
		name  string
		raw   string
		check func(t *testing.T, tok *Token) // nil: Parse must fail
	}{
		{"good", good, func(t *testing.T, tok *Token) {
			want := &Token{
				Issuer: "https://issuer.example", Subject: "u1", Audience: []string{"client"},
				IssuedAt: time.Unix(1700000000, 0).UTC(), Expiry: time.Unix(1700000600, 0).UTC(),
				Nonce: "n", Email: "a@b.c", EmailVerified: true, Alg: "RS256", KeyID: "k1",
			}
			tok.signingInput, tok.signature = nil, nil
			if !reflect.DeepEqual(tok, want) {
				t.Errorf("got %+v\nwant %+v", tok, want)
			}
		}},
		{"aud array", jws(goodHeader, strings.Replace(payload(""), `"aud":"client"`, `"aud":["x","client"]`, 1)),
			func(t *testing.T, tok *Token) {
				if !reflect.DeepEqual(tok.Audience, []string{"x", "client"}) {
					t.Errorf("aud = %q", tok.Audience)
				}
			}},
		{"float times", jws(goodHeader, `{"iss":"i","sub":"s","aud":"a","iat":1700000000.25,"exp":1.7000006e9}`),
			func(t *testing.T, tok *Token) {
				if !tok.IssuedAt.Equal(time.Unix(1700000000, 250_000_000)) || !tok.Expiry.Equal(time.Unix(1700000600, 0)) {
					t.Errorf("iat %v exp %v", tok.IssuedAt, tok.Expiry)
				}
			}},
		{"email_verified string", jws(goodHeader, payload(`,"email_verified":"true"`)),
			func(t *testing.T, tok *Token) {
				if !tok.EmailVerified {
					t.Error("email_verified \"true\" not read as true")
				}
			}},
		{"email_verified false string", jws(goodHeader, payload(`,"email_verified":"false"`)),
			func(t *testing.T, tok *Token) {
				if tok.EmailVerified {
					t.Error("email_verified \"false\" read as true")
				}
			}},
		{"no kid, null optionals", jws(`{"alg":"ES256"}`, payload(`,"nonce":null,"email":null`)),
			func(t *testing.T, tok *Token) {
				if tok.KeyID != "" || tok.Nonce != "" || tok.Email != "" {
					t.Errorf("got %+v", tok)
				}
			}},
		{"empty signature parses", strings.TrimSuffix(good, enc([]byte("sig"))), func(t *testing.T, tok *Token) {
			if len(tok.signature) != 0 {
				t.Error("signature not empty")
			}
		}},

		{"empty", "", nil},
		{"two parts", enc([]byte(goodHeader)) + "." + enc([]byte(payload(""))), nil},
		{"four parts", good + ".x", nil},
		{"padding", enc([]byte(goodHeader)) + "==." + enc([]byte(payload(""))) + ".c2ln", nil},
		{"std alphabet", base64.StdEncoding.EncodeToString([]byte(`{"alg":"RS256","kid":"??>"}`)) + "." + enc([]byte(payload(""))) + ".c2ln", nil},
		{"bad base64 char", "e*J." + enc([]byte(payload(""))) + ".c2ln", nil},
		{"line break", enc([]byte(goodHeader))[:4] + "\n" + enc([]byte(goodHeader))[4:] + "." + enc([]byte(payload(""))) + ".c2ln", nil},
		{"non-canonical base64", enc([]byte(goodHeader)) + "." + enc([]byte(payload(""))) + ".c2l", nil}, // "c2k" is canonical for "si"
		{"empty header", "." + enc([]byte(payload(""))) + ".c2ln", nil},
		{"header not JSON", jws(`alg`, payload("")), nil},
		{"header array", jws(`[]`, payload("")), nil},
		{"no alg", jws(`{"kid":"k"}`, payload("")), nil},
		{"alg not string", jws(`{"alg":1}`, payload("")), nil},
		{"kid not string", jws(`{"alg":"RS256","kid":7}`, payload("")), nil},
		{"payload array", jws(goodHeader, `[1]`), nil},
		{"trailing garbage", jws(goodHeader, payload("")+"x"), nil},
		{"invalid UTF-8", jws(goodHeader, strings.Replace(payload(""), `"u1"`, "\"u\xff\"", 1)), nil},
		{"missing iss", jws(goodHeader, `{"sub":"u","aud":"a","iat":1,"exp":2}`), nil},
		{"iss wrong case", jws(goodHeader, `{"ISS":"i","sub":"u","aud":"a","iat":1,"exp":2}`), nil},
		{"missing sub", jws(goodHeader, `{"iss":"i","aud":"a","iat":1,"exp":2}`), nil},
		{"empty sub", jws(goodHeader, `{"iss":"i","sub":"","aud":"a","iat":1,"exp":2}`), nil},
		{"sub number", jws(goodHeader, `{"iss":"i","sub":5,"aud":"a","iat":1,"exp":2}`), nil},
		{"missing aud", jws(goodHeader, `{"iss":"i","sub":"u","iat":1,"exp":2}`), nil},
		{"empty aud array", jws(goodHeader, `{"iss":"i","sub":"u","aud":[],"iat":1,"exp":2}`), nil},
		{"aud number", jws(goodHeader, `{"iss":"i","sub":"u","aud":3,"iat":1,"exp":2}`), nil},
		{"aud array of numbers", jws(goodHeader, `{"iss":"i","sub":"u","aud":["a",3],"iat":1,"exp":2}`), nil},
		{"aud empty string", jws(goodHeader, `{"iss":"i","sub":"u","aud":"","iat":1,"exp":2}`), nil},
		{"missing iat", jws(goodHeader, `{"iss":"i","sub":"u","aud":"a","exp":2}`), nil},
		{"iat string", jws(goodHeader, `{"iss":"i","sub":"u","aud":"a","iat":"1","exp":2}`), nil},
		{"missing exp", jws(goodHeader, `{"iss":"i","sub":"u","aud":"a","iat":1}`), nil},
		{"exp null", jws(goodHeader, `{"iss":"i","sub":"u","aud":"a","iat":1,"exp":null}`), nil},
		{"negative exp", jws(goodHeader, `{"iss":"i","sub":"u","aud":"a","iat":1,"exp":-5}`), nil},
		{"exp past year 9999", jws(goodHeader, `{"iss":"i","sub":"u","aud":"a","iat":1,"exp":1e300}`), nil},
		{"email_verified yes", jws(goodHeader, payload(`,"email_verified":"yes"`)), nil},
		{"nonce number", jws(goodHeader, payload(`,"nonce":1`)), nil},
		{"huge token", jws(goodHeader, payload(`,"pad":"`+strings.Repeat("a", MaxTokenSize)+`"`)), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, err := Parse(tt.raw)
			if tt.check == nil {
				if err == nil || tok != nil {
					t.Fatalf("Parse = %+v, %v; want nil and an error", tok, err)
				}
				if KindOf(err) != KindMalformed {
					t.Fatalf("kind = %v, want malformed (%v)", KindOf(err), err)
				}
				return
			}
			if err != nil || tok == nil {
				t.Fatalf("Parse: %v", err)
			}
			tt.check(t, tok)
		})
	}
}

func TestErrorType(t *testing.T) {
	raw := jws(goodHeader, `{"iss":"secret-looking","sub":"u","aud":"a","iat":"x","exp":2}`)
	_, err := Parse(raw)
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindMalformed {
		t.Fatalf("errors.As: %v", err)
	}
	if !errors.Is(err, &Error{Kind: KindMalformed}) || errors.Is(err, &Error{Kind: KindInvalid}) {
		t.Error("errors.Is by kind does not work")
	}
	if msg := err.Error(); strings.Contains(msg, "secret-looking") || strings.Contains(msg, raw[:10]) {
		t.Errorf("message leaks token content: %q", msg)
	}
	cause := errors.New("dial failed")
	wrapped := &Error{Kind: KindUnavailable, Detail: "x", Err: cause}
	if !errors.Is(wrapped, cause) || strings.Contains(wrapped.Error(), "dial") {
		t.Errorf("cause handling: %v", wrapped)
	}
	if KindOf(errors.New("plain")) != 0 {
		t.Error("KindOf of a foreign error")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(jws(goodHeader, payload(`,"nonce":"n","email":"a@b.c","email_verified":"true"`)))
	f.Add(jws(`{"alg":"ES256"}`, `{"iss":"i","sub":"s","aud":["a","b"],"iat":1.5,"exp":2e9}`))
	f.Add(jws(`{"alg":"none"}`, payload("")) + "")
	f.Add("a.b.c")
	f.Add("..")
	f.Add("eyJ=.e30.")
	f.Fuzz(func(t *testing.T, raw string) {
		tok, err := Parse(raw)
		if (tok == nil) == (err == nil) {
			t.Fatalf("Parse = %v, %v: exactly one must be nil", tok, err)
		}
		if err != nil {
			if KindOf(err) != KindMalformed {
				t.Fatalf("error kind %v: %v", KindOf(err), err)
			}
			return
		}
		again, err := Parse(raw)
		if err != nil || !reflect.DeepEqual(tok, again) {
			t.Fatalf("re-parse differs: %+v / %+v, %v", tok, again, err)
		}
		if tok.Issuer == "" || tok.Subject == "" || len(tok.Audience) == 0 || tok.Alg == "" {
			t.Fatalf("accepted a token without required claims: %+v", tok)
		}
	})
}
