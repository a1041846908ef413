// Command datapack rewrites the data section of a WebAssembly module so that
// it compresses better, without changing what the module puts in memory.
//
//	go run ./wasm/datapack in.wasm out.wasm
//
// Go's linker writes the initial memory as one data segment per stretch of
// non-zero bytes, skipping every run of eight zeros or more. That saves raw
// bytes but not compressed ones: under js/wasm the runtime's function lookup
// table (findfunctab, one 20-byte bucket per 4 KB of the 64 KB-per-function
// PC space) is almost all zeros with a byte or two set every 20 bytes, so it
// becomes some 64,000 tiny segments, each with its own offset. Brotli and gzip
// squeeze the zeros far better than those headers: joining segments that are
// less than maxGap bytes apart took the wallet module from 1,000 KB to 924 KB
// of brotli (and from 1,340 KB to 1,224 KB of gzip), for 0.7 MB more of raw
// bytes that are nearly all zeros.
//
// The zeros written into the gaps are what memory holds there anyway: a
// module's memory starts zeroed and active data segments are copied into it
// at instantiation, before any code runs. datapack accepts only the segments
// the Go linker emits (active, memory 0, i32.const offset), refuses
// overlapping ones, keeps every other section byte for byte, and checks that
// the memory image of the new segments equals that of the old before writing.
package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
)

// maxGap bounds the gaps that are filled: runs of zeros shorter than this are
// written out inside a segment, longer ones still separate segments. Values
// from 32 bytes to 64 KB gave the same brotli size within its noise of a few
// kilobytes; what matters is that the 19-byte gaps of findfunctab are filled.
const maxGap = 4096

const (
	sectionData      = 11
	sectionDataCount = 12
)

var wasmHeader = []byte("\x00asm\x01\x00\x00\x00")

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: datapack in.wasm out.wasm")
		os.Exit(2)
	}
	in, err := os.ReadFile(os.Args[1])
	if err == nil {
		var out []byte
		if out, err = pack(in); err == nil {
			err = os.WriteFile(os.Args[2], out, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "datapack:", err)
		os.Exit(1)
	}
}

// segment is an active data segment: data copied to memory at offset.
type segment struct {
	offset uint32
	data   []byte
}

// pack returns the module with its data segments joined across gaps shorter
// than maxGap. A module without a data section is returned unchanged.
func pack(module []byte) ([]byte, error) {
	if !bytes.HasPrefix(module, wasmHeader) {
		return nil, errors.New("not a WebAssembly 1.0 module")
	}
	out := append([]byte(nil), wasmHeader...)
	var before, after []segment
	seenData := false
	r := reader{b: module, p: len(wasmHeader)}
	for !r.done() {
		id := r.byte()
		size := r.uleb()
		body := r.bytes(size)
		if r.err != nil {
			return nil, r.err
		}
		switch id {
		case sectionData:
			if seenData {
				return nil, errors.New("module has two data sections")
			}
			seenData = true
			segs, err := parseData(body)
			if err != nil {
				return nil, err
			}
			merged, err := merge(segs)
			if err != nil {
				return nil, err
			}
			before, after = segs, merged
			body = encodeData(merged)
		case sectionDataCount:
			// Only needed with bulk-memory instructions, which Go does not
			// emit; rewriting it would mean tracking segment indices.
			return nil, errors.New("module has a DataCount section")
		}
		out = append(out, id)
		out = appendUleb(out, uint64(len(body)))
		out = append(out, body...)
	}
	if !sameMemory(before, after) {
		return nil, errors.New("internal error: the packed segments give a different memory image")
	}
	return out, nil
}

// parseData reads a data section made of active segments for memory 0.
func parseData(body []byte) ([]segment, error) {
	r := reader{b: body}
	n := r.uleb()
	var segs []segment
	for i := uint64(0); i < n && r.err == nil; i++ {
		if flags := r.uleb(); flags != 0 {
			return nil, fmt.Errorf("data segment %d: flags %d, want an active segment for memory 0", i, flags)
		}
		if op := r.byte(); op != 0x41 { // i32.const
			return nil, fmt.Errorf("data segment %d: offset is not an i32.const", i)
		}
		v := r.sleb()
		if end := r.byte(); end != 0x0b {
			return nil, fmt.Errorf("data segment %d: offset expression is not a single i32.const", i)
		}
		data := r.bytes(r.uleb())
		offset := uint32(int32(v)) // an i32 address is unsigned
		if r.err == nil && (v != int64(int32(v)) || uint64(offset)+uint64(len(data)) > 1<<32) {
			return nil, fmt.Errorf("data segment %d: offset %d out of range", i, v)
		}
		segs = append(segs, segment{offset: offset, data: data})
	}
	if r.err != nil {
		return nil, r.err
	}
	if !r.done() {
		return nil, errors.New("data section: bytes after the last segment")
	}
	return segs, nil
}

// merge sorts segs by offset and joins neighbours less than maxGap bytes
// apart, writing the zeros between them.
func merge(segs []segment) ([]segment, error) {
	segs = slices.Clone(segs)
	slices.SortStableFunc(segs, func(a, b segment) int { return cmp.Compare(a.offset, b.offset) })
	var out []segment
	for _, s := range segs {
		if len(out) > 0 {
			last := &out[len(out)-1]
			end := uint64(last.offset) + uint64(len(last.data))
			switch {
			case uint64(s.offset) < end:
				return nil, fmt.Errorf("data segments overlap at offset %d", s.offset)
			case uint64(s.offset)-end < maxGap:
				last.data = append(last.data, make([]byte, uint64(s.offset)-end)...)
				last.data = append(last.data, s.data...)
				continue
			}
		}
		out = append(out, segment{offset: s.offset, data: slices.Clone(s.data)})
	}
	return out, nil
}

func encodeData(segs []segment) []byte {
	b := appendUleb(nil, uint64(len(segs)))
	for _, s := range segs {
		b = append(b, 0, 0x41) // active, memory 0; i32.const
		b = appendSleb(b, int64(int32(s.offset)))
		b = append(b, 0x0b) // end
		b = appendUleb(b, uint64(len(s.data)))
		b = append(b, s.data...)
	}
	return b
}

// sameMemory reports whether segments before and after initialise memory
// alike: every byte of after is the byte of before at its address, or zero
// where before has none, and after covers every segment of before. (before
// does not overlap itself; merge checks that.)
func sameMemory(before, after []segment) bool {
	before = slices.Clone(before)
	slices.SortFunc(before, func(a, b segment) int { return cmp.Compare(a.offset, b.offset) })
	i := 0
	for _, m := range after {
		want := make([]byte, len(m.data))
		end := uint64(m.offset) + uint64(len(m.data))
		for ; i < len(before) && uint64(before[i].offset) < end; i++ {
			s := before[i]
			if s.offset < m.offset || uint64(s.offset)+uint64(len(s.data)) > end {
				return false
			}
			copy(want[s.offset-m.offset:], s.data)
		}
		if !bytes.Equal(want, m.data) {
			return false
		}
	}
	return i == len(before)
}

// reader decodes the module's LEB128 integers and byte strings; the first
// error sticks and later reads return zero values.
type reader struct {
	b   []byte
	p   int
	err error
}

func (r *reader) done() bool { return r.err != nil || r.p >= len(r.b) }

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("truncated or malformed %s at byte %d", what, r.p)
	}
}

func (r *reader) byte() byte {
	if r.err != nil || r.p >= len(r.b) {
		r.fail("module")
		return 0
	}
	r.p++
	return r.b[r.p-1]
}

func (r *reader) bytes(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)-r.p) {
		r.fail("byte string")
		return nil
	}
	r.p += int(n)
	return r.b[r.p-int(n) : r.p]
}

func (r *reader) uleb() uint64 {
	var x uint64
	for shift := 0; shift < 64; shift += 7 {
		c := r.byte()
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x
		}
	}
	r.fail("integer")
	return 0
}

func (r *reader) sleb() int64 {
	var x int64
	for shift := 0; shift < 64; shift += 7 {
		c := r.byte()
		x |= int64(c&0x7f) << shift
		if c < 0x80 {
			if shift < 57 && c&0x40 != 0 {
				x |= -1 << (shift + 7)
			}
			return x
		}
	}
	r.fail("integer")
	return 0
}

func appendUleb(b []byte, x uint64) []byte {
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}

func appendSleb(b []byte, x int64) []byte {
	for {
		c := byte(x & 0x7f)
		x >>= 7
		if x == 0 && c&0x40 == 0 || x == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
