package describe

import (
	"slices"
	"strings"

	"github.com/metalog/metalog/schema"
)

// createOrder returns the columns of table t in the order DESCRIBE lists
// them, which is Cassandra's (4.0 to 5.0: TableMetadata.toCqlString walks
// allColumnsInCreateOrder), not the order the model stores them in: the
// partition key columns in key order, the clustering columns in key
// order, then the static columns, then the regular ones. Within the
// static and within the regular columns, Cassandra keeps them sorted by
// ColumnMetadata.compareTo, so the simple columns come first and the
// complex ones (non-frozen collections and user types) after, each group
// by name as compareNames compares them. So a table grown by ALTER TABLE
// ... ADD describes as the same table written in one CREATE TABLE.
//
// The returned slice is new: it costs one allocation of len(t.Columns)
// columns and O(n log n) comparisons.
func createOrder(t *schema.Table) []schema.Column {
	keyPos := make(map[string]int, len(t.PartitionKey)+len(t.Clustering))
	for i, name := range t.PartitionKey {
		keyPos[name] = i
	}
	for i, cc := range t.Clustering {
		keyPos[cc.Name] = i
	}
	out := slices.Clone(t.Columns)
	slices.SortStableFunc(out, func(a, b schema.Column) int {
		if ga, gb := columnGroup(a), columnGroup(b); ga != gb {
			return ga - gb
		}
		switch a.Kind {
		case schema.PartitionKey, schema.Clustering:
			return keyPos[a.Name] - keyPos[b.Name]
		}
		if ca, cb := schema.IsMultiCell(a.Type), schema.IsMultiCell(b.Type); ca != cb {
			if ca {
				return 1
			}
			return -1
		}
		return compareNames(a.Name, b.Name)
	})
	return out
}

// columnGroup ranks the kinds of column in DESCRIBE order: partition key,
// clustering, static, regular. (Cassandra's Kind enum has REGULAR before
// STATIC, but it keeps the two in separate sets and lists the static set
// first.)
func columnGroup(c schema.Column) int {
	switch c.Kind {
	case schema.PartitionKey:
		return 0
	case schema.Clustering:
		return 1
	case schema.Static:
		return 2
	}
	return 3
}

// compareNames compares column names as Cassandra's ColumnMetadata.compareTo
// does for two columns of the same kind and complexity: by the UTF-8
// bytes of the name, unsigned, except that the top bit of the first byte
// is flipped. (compareTo first compares a packed long holding the name's
// first six bytes; the name's prefix there has its top bit flipped so that
// signed comparison orders it as unsigned, and the packing shifts that
// bit down into the first byte.) So a name that starts with a non-ASCII
// character sorts before one that starts with an ASCII character; among
// ASCII names the order is plain byte order ("B" < "_" < "a").
func compareNames(a, b string) int {
	if fa, fb := firstByteFlipped(a), firstByteFlipped(b); fa != fb {
		return int(fa) - int(fb)
	}
	return strings.Compare(a, b)
}

// firstByteFlipped is the first byte of name with its top bit flipped,
// 0x80 for the empty name (which Cassandra reads as zero bytes).
func firstByteFlipped(name string) byte {
	if name == "" {
		return 0x80
	}
	return name[0] ^ 0x80
}
