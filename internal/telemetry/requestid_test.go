package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestValidRequestID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"req_abc", true},
		{"3f2a9c1e-7b6d-4e2f-9a8b-1c2d3e4f5a6b", true},
		{"trace:abc/def+g=h@i.j", true},
		{strings.Repeat("a", MaxRequestIDLen), true},
		{strings.Repeat("a", MaxRequestIDLen+1), false},
		{"", false},
		{"has space", false},
		{`quote"`, false},
		{"new\nline", false},
		{"é", false},
		{"Request:7c3a2b8e-0f1d-4c5b-9e6a-2d4f8b1c3e5a", false}, // a signed-retry challenge
	} {
		if got := ValidRequestID(tc.id); got != tc.want {
			t.Errorf("ValidRequestID(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

func TestNewRequestID(t *testing.T) {
	a, b := NewRequestID(), NewRequestID()
	if a == b || !ValidRequestID(a) || !strings.HasPrefix(a, "req_") || len(a) != 30 {
		t.Fatalf("NewRequestID: %q, %q", a, b)
	}
	if got := RequestIDOf("bad id"); got == "bad id" || !ValidRequestID(got) {
		t.Errorf("RequestIDOf(bad) = %q", got)
	}
	if got := RequestIDOf("mine-1"); got != "mine-1" {
		t.Errorf("RequestIDOf(mine-1) = %q", got)
	}
}

func TestLogHandlerAddsTheRequestID(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(LogHandler(slog.NewTextHandler(&buf, nil))).With("component", "test")
	log.InfoContext(WithRequestID(context.Background(), "req_x"), "hello")
	log.InfoContext(context.Background(), "no id")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "request_id=req_x") || !strings.Contains(lines[0], "component=test") ||
		strings.Contains(lines[1], "request_id") {
		t.Fatalf("log:\n%s", buf.String())
	}
}
