package sigv4

import (
	"bytes"
	"hash/crc64"
	"math/rand/v2"
	"testing"
)

// crc64NVMEReflected is CRC-64/NVME's polynomial in the reflected form
// hash/crc64 takes: the reference NewCRC64NVME is held to.
const crc64NVMEReflected = 0x9a6c9329ac4bc9b5

// TestCRC64NVMEMatchesHashCRC64 holds the accelerated CRC-64/NVME to
// hash/crc64's table-driven one over every length up to a few KiB (the
// accelerated path has separate code for short inputs, 128-byte runs,
// 1 KiB runs and unaligned starts), in one write and split at random.
func TestCRC64NVMEMatchesHashCRC64(t *testing.T) {
	table := crc64.MakeTable(crc64NVMEReflected)
	rng := rand.New(rand.NewPCG(35, 7))
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for length := 0; length <= len(data)-16; length++ {
		offset := length % 16 // a start on every alignment
		input := data[offset : offset+length]
		want := crc64.Checksum(input, table)
		whole := NewCRC64NVME()
		whole.Write(input)
		if got := whole.Sum64(); got != want {
			t.Fatalf("length %d at offset %d: one write gives %x, hash/crc64 %x", length, offset, got, want)
		}
		split := NewCRC64NVME()
		for rest := input; len(rest) > 0; {
			n := 1 + rng.IntN(len(rest))
			split.Write(rest[:n])
			rest = rest[n:]
		}
		if got := split.Sum64(); got != want {
			t.Fatalf("length %d at offset %d: split writes give %x, hash/crc64 %x", length, offset, got, want)
		}
		var state uint64
		for rest := input; len(rest) > 0; {
			n := 1 + rng.IntN(len(rest))
			state = UpdateCRC64NVME(state, rest[:n])
			rest = rest[n:]
		}
		if state != want {
			t.Fatalf("length %d at offset %d: UpdateCRC64NVME gives %x, hash/crc64 %x", length, offset, state, want)
		}
	}
	big := bytes.Repeat(data, 300) // 1.5 MB: the long-run path
	h := NewCRC64NVME()
	h.Write(big)
	if got, want := h.Sum64(), crc64.Checksum(big, table); got != want {
		t.Fatalf("1.5 MB: %x, hash/crc64 %x", got, want)
	}
}

// BenchmarkCRC64NVME4KiB is the framing trailer's checksum of a small
// PUT, written as framedBody writes it: what hash/crc64 made cost a 16 KiB
// table build per Write.
func BenchmarkCRC64NVME4KiB(b *testing.B) {
	data := bytes.Repeat([]byte{0x5a}, 4<<10)
	b.Run("NewCRC64NVME", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			h := NewCRC64NVME()
			h.Write(data)
			h.Sum64()
		}
	})
	b.Run("hash-crc64", func(b *testing.B) {
		table := crc64.MakeTable(crc64NVMEReflected)
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			h := crc64.New(table)
			h.Write(data)
			h.Sum64()
		}
	})
}
