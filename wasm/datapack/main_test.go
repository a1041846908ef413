package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// module assembles a WebAssembly module from sections (id, body).
func module(sections ...[]byte) []byte {
	m := append([]byte(nil), wasmHeader...)
	for _, s := range sections {
		m = append(m, s[0])
		m = appendUleb(m, uint64(len(s)-1))
		m = append(m, s[1:]...)
	}
	return m
}

func section(id byte, body []byte) []byte { return append([]byte{id}, body...) }

// sections splits a module into its sections (id, body), in order.
func sections(t *testing.T, m []byte) [][]byte {
	t.Helper()
	r := reader{b: m, p: len(wasmHeader)}
	var out [][]byte
	for !r.done() {
		id := r.byte()
		body := r.bytes(r.uleb())
		out = append(out, section(id, body))
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	return out
}

func dataSegments(t *testing.T, m []byte) []segment {
	t.Helper()
	for _, s := range sections(t, m) {
		if s[0] == sectionData {
			segs, err := parseData(s[1:])
			if err != nil {
				t.Fatal(err)
			}
			return segs
		}
	}
	return nil
}

func TestPack(t *testing.T) {
	// Out of order, as the Go linker may write them; gaps of 0, 19,
	// maxGap-1, maxGap and more bytes; an offset above 2^31.
	in := []segment{
		{offset: 10000, data: []byte{1, 2, 3}},
		{offset: 10003, data: []byte{4}},                    // adjacent
		{offset: 10023, data: []byte{5, 6}},                 // 19 zeros before
		{offset: 10025 + maxGap - 1, data: []byte{7}},       // maxGap-1 zeros before: joined
		{offset: 10025 + 2*maxGap, data: []byte{8}},         // maxGap zeros before: apart
		{offset: 16, data: []byte("rodata")},                // first in memory, last in the file
		{offset: 1 << 20, data: bytes.Repeat([]byte{9}, 5)}, // far away
		{offset: 0x8000_0000, data: []byte{10}},
	}
	custom := section(0, []byte("\x04name\x00"))
	code := section(10, []byte{0})
	in2 := module(custom, code, section(sectionData, encodeData(in)), custom)
	out, err := pack(in2)
	if err != nil {
		t.Fatal(err)
	}
	got, want := sections(t, out), sections(t, in2)
	if len(got) != len(want) {
		t.Fatalf("%d sections, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i][0] != sectionData && !bytes.Equal(got[i], want[i]) {
			t.Errorf("section %d (id %d) changed", i, got[i][0])
		}
	}
	segs := dataSegments(t, out)
	var offsets []uint32
	for _, s := range segs {
		offsets = append(offsets, s.offset)
	}
	if want := []uint32{16, 10000, 10025 + 2*maxGap, 1 << 20, 0x8000_0000}; !equalUint32(offsets, want) {
		t.Errorf("segments at %v, want %v", offsets, want)
	}
	if !sameMemory(in, segs) {
		t.Error("memory image changed")
	}
	if joined := segs[1].data; !bytes.Equal(joined[:6], []byte{1, 2, 3, 4, 0, 0}) || joined[len(joined)-1] != 7 || len(joined) != 25+maxGap {
		t.Errorf("joined segment wrong: %d bytes", len(joined))
	}
	again, err := pack(out)
	if err != nil || !bytes.Equal(again, out) {
		t.Errorf("packing twice changed the module (err %v)", err)
	}
}

func equalUint32(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPackWithoutData(t *testing.T) {
	in := module(section(10, []byte{0}))
	out, err := pack(in)
	if err != nil || !bytes.Equal(out, in) {
		t.Errorf("pack = %x, %v; want the module unchanged", out, err)
	}
}

func TestPackRefuses(t *testing.T) {
	seg := func(b ...byte) []byte { return b }
	for name, m := range map[string][]byte{
		"not wasm":   []byte("\x00asm\x02\x00\x00\x00"),
		"truncated":  append(module(section(sectionData, encodeData([]segment{{offset: 8, data: []byte{1}}}))), 11, 5, 1),
		"overlap":    module(section(sectionData, encodeData([]segment{{offset: 8, data: []byte{1, 2}}, {offset: 9, data: []byte{3}}}))),
		"passive":    module(section(sectionData, seg(1, 1, 1, 7))),
		"memory 1":   module(section(sectionData, seg(1, 2, 1, 0x41, 0, 0x0b, 1, 7))),
		"global":     module(section(sectionData, seg(1, 0, 0x23, 0, 0x0b, 1, 7))),
		"long expr":  module(section(sectionData, seg(1, 0, 0x41, 0, 0x41, 0, 0x0b, 1, 7))),
		"data count": module(section(sectionDataCount, seg(0)), section(sectionData, seg(0))),
		"two data":   module(section(sectionData, encodeData([]segment{{offset: 8, data: []byte{1}}})), section(sectionData, encodeData([]segment{{offset: 9, data: []byte{1}}}))),
		"trailing":   module(section(sectionData, seg(0, 0))),
		"past 4 GiB": module(section(sectionData, encodeData([]segment{{offset: 0xffff_ffff, data: []byte{1, 2}}}))),
	} {
		if _, err := pack(m); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestPackGoProgram packs a real js/wasm program and, where Node is
// installed, runs both versions: same output, far fewer segments.
func TestPackGoProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a js/wasm program")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	goroot, err := exec.Command(goCmd, "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := "package main\n\nimport \"fmt\"\n\nvar table = map[string]int{\"a\": 1, \"b\": 2}\n\nfunc main() { fmt.Println(\"packed\", table[\"b\"]) }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command(goCmd, "build", "-trimpath", "-ldflags=-s -w", "-o", "hello.wasm", ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	in, err := os.ReadFile(filepath.Join(dir, "hello.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := pack(in)
	if err != nil {
		t.Fatal(err)
	}
	before, after := dataSegments(t, in), dataSegments(t, out)
	if len(after) == 0 || len(after)*10 > len(before) {
		t.Errorf("%d segments became %d; expected a tenth or fewer", len(before), len(after))
	}
	if !sameMemory(before, after) {
		t.Error("memory image changed")
	}
	packed := filepath.Join(dir, "packed.wasm")
	if err := os.WriteFile(packed, out, 0o644); err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Log("node not found; not running the modules")
		return
	}
	runner := filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec_node.js")
	for _, f := range []string{filepath.Join(dir, "hello.wasm"), packed} {
		got, err := exec.Command(node, runner, f).CombinedOutput()
		if err != nil || strings.TrimSpace(string(got)) != "packed 2" {
			t.Errorf("%s: %q, %v; want \"packed 2\"", filepath.Base(f), got, err)
		}
	}
}

// TestSameMemory: the check pack runs before writing catches a changed
// byte, a dropped segment and a segment that spills outside its merged one.
func TestSameMemory(t *testing.T) {
	before := []segment{{offset: 8, data: []byte{1, 2}}, {offset: 20, data: []byte{3}}}
	good := []segment{{offset: 8, data: []byte{1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3}}}
	if !sameMemory(before, good) {
		t.Error("equal images reported different")
	}
	for name, after := range map[string][]segment{
		"changed byte": {{offset: 8, data: []byte{1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3}}},
		"dropped":      {{offset: 8, data: []byte{1, 2}}},
		"cut short":    {{offset: 8, data: []byte{1}}, {offset: 20, data: []byte{3}}},
		"shifted":      {{offset: 9, data: []byte{1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3}}},
	} {
		if sameMemory(before, after) {
			t.Errorf("%s: reported equal", name)
		}
	}
}
