package cqltext

import (
	"sort"
	"strings"
)

// keywords are CQL's keywords by their lowercase text, true for the
// reserved ones.
//
// The reserved keywords cannot be used as unquoted identifiers
// (Cassandra's reserved keywords; replace and unset, reserved by
// Cassandra 3, are names again in its grammar and reserved list, and so
// here). A word is only ever taken off that list: the log's entries are
// parsed again when they apply, so a word reserved later would refuse
// entries that applied.
//
// The unreserved keywords are those Cassandra's grammar lets stand as
// identifiers and as a bare property value (Parser.g's unreserved_keyword:
// basic_unreserved_keyword, the native type names of
// unreserved_function_keyword, and TTL, COUNT, WRITETIME, MAXWRITETIME,
// KEY, CAST, JSON and DISTINCT).
var keywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`add allow alter and apply asc authorize batch begin by
		columnfamily create delete desc describe drop entries execute from full grant if in
		index infinity insert into is keyspace limit materialized modify nan norecursive not null of
		on or order primary rename revoke schema select set table to token truncate
		unlogged update use using view where with`) {
		m[w] = true
	}
	for _, w := range strings.Fields(`keys as cluster clustering compact storage tables type types values map
		list filtering permission permissions keyspaces all user users role roles identity superuser superusers
		nosuperuser login nologin options password generated hashed exists custom trigger contains internals only
		static frozen tuple function functions aggregate aggregates sfunc stype finalfunc initcond returns language
		called input like per partition group datacenters cidrs access default mbean mbeans replace unset masked
		unmask select_masked vector ann between check indexes
		ascii bigint blob boolean counter decimal double duration float inet int smallint text timestamp tinyint
		uuid varchar varint timeuuid date time
		ttl count writetime maxwritetime key cast json distinct`) {
		if m[w] {
			panic("cqltext: keyword " + w + " is both reserved and unreserved")
		}
		m[w] = false
	}
	return m
}()

// IsReserved reports whether word (in any case) is a reserved CQL
// keyword, which must be double-quoted to be used as an identifier.
func IsReserved(word string) bool {
	return keywords[strings.ToLower(word)]
}

// IsUnreserved reports whether word, in lower case, is an unreserved CQL
// keyword: one that may stand as an identifier, and as a bare property
// value, which is the string of its text as written.
func IsUnreserved(word string) bool {
	reserved, ok := keywords[word]
	return ok && !reserved
}

// Keywords returns the reserved keywords (reserved true) or the
// unreserved ones, in lower case and sorted; the slice is the caller's.
func Keywords(reserved bool) []string {
	var out []string
	for w, r := range keywords {
		if r == reserved {
			out = append(out, w)
		}
	}
	sort.Strings(out)
	return out
}
