package describe

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// packedNameOrder is the name part of the long Cassandra's ColumnMetadata
// compares first, computed as its source does: the first eight bytes of
// the name, big-endian and zero-padded, with the top bit flipped, then
// shifted right by 16 (unsigned). The rest of that long (kind, complexity,
// position) is equal for the columns compareNames compares.
func packedNameOrder(name string) uint64 {
	var prefix uint64
	for i := 0; i < 8; i++ {
		prefix <<= 8
		if i < len(name) {
			prefix |= uint64(name[i])
		}
	}
	prefix ^= 1 << 63
	return prefix >> 16
}

// cassandraCompare is ColumnMetadata.compareTo for two columns of the same
// kind and complexity: the packed long, then ColumnIdentifier.compareTo
// (the unflipped eight-byte prefix, then the bytes, unsigned), which for
// equal packed longs is the bytes compared unsigned.
func cassandraCompare(a, b string) int {
	pa, pb := packedNameOrder(a), packedNameOrder(b)
	switch {
	case pa < pb:
		return -1
	case pa > pb:
		return 1
	}
	return strings.Compare(a, b)
}

// sign is -1, 0 or 1 as n is negative, zero or positive.
func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// TestCompareNamesAsCassandra checks compareNames against the arithmetic
// of Cassandra's comparison, on names of ASCII and non-ASCII characters.
func TestCompareNamesAsCassandra(t *testing.T) {
	name := rapid.StringOfN(rapid.SampledFrom([]rune{'a', 'b', 'A', '_', '0', ' ', '"', 'é', 'ß', '世', 0x7f, 0x80}), 1, 9, -1)
	rapid.Check(t, func(t *rapid.T) {
		a, b := name.Draw(t, "a"), name.Draw(t, "b")
		if got, want := sign(compareNames(a, b)), cassandraCompare(a, b); got != want {
			t.Fatalf("compareNames(%q, %q) = %d, want %d", a, b, got, want)
		}
	})
	for _, tt := range []struct{ a, b string }{
		{"é", "a"}, {"A", "a"}, {"_", "a"}, {"Z", "_"}, {"a", "aé"}, {"aé", "b"}, {"abcdefg", "abcdefh"}, {"é", "世"},
	} {
		if compareNames(tt.a, tt.b) >= 0 || compareNames(tt.b, tt.a) <= 0 {
			t.Errorf("want %q before %q", tt.a, tt.b)
		}
	}
}
