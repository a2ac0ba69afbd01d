package schema

import "strconv"

// validateTable checks the structural invariants of a table and returns a
// reason when one is broken. It runs after CREATE TABLE builds a table, in
// PutTable and when decoding, so every Table in a Schema satisfies it.
func validateTable(t *Table) string {
	if r := nameReason("keyspace", t.Keyspace); r != "" {
		return r
	}
	if r := nameReason("table", t.Name); r != "" {
		return r
	}
	if c, ok := CanonicalUUID(t.ID); !ok || c != t.ID {
		return "table id " + strconv.Quote(t.ID) + " is not lowercase UUID text"
	}
	if len(t.Columns) == 0 {
		return "a table needs at least one column"
	}
	var nPK, nCK, nStatic, nCounter, nRegular int
	var seen map[string]bool // for wide tables, to stay linear
	if len(t.Columns) > 16 {
		seen = make(map[string]bool, len(t.Columns))
	}
	for i := range t.Columns {
		c := &t.Columns[i]
		if r := columnNameReason(c.Name); r != "" {
			return r
		}
		if seen != nil {
			if seen[c.Name] {
				return "duplicate column name " + c.Name
			}
			seen[c.Name] = true
		} else {
			for j := 0; j < i; j++ {
				if t.Columns[j].Name == c.Name {
					return "duplicate column name " + c.Name
				}
			}
		}
		if r := validateType(c.Type, 0, false); r != "" {
			return "column " + c.Name + ": " + r
		}
		isCounter := c.Type == TypeCounter
		switch c.Kind {
		case PartitionKey, Clustering:
			if c.Kind == PartitionKey {
				nPK++
			} else {
				nCK++
			}
			if isCounter {
				return "counter column " + c.Name + " cannot be part of the PRIMARY KEY"
			}
			if _, udt := c.Type.(UserTypeRef); udt {
				return "non-frozen user type column " + c.Name + " cannot be part of the PRIMARY KEY"
			}
			if IsMultiCell(c.Type) {
				return "non-frozen collection column " + c.Name + " cannot be part of the PRIMARY KEY"
			}
			if containsDuration(c.Type) {
				return "duration column " + c.Name + " cannot be part of the PRIMARY KEY"
			}
		case Static:
			nStatic++
			if isCounter {
				nCounter++
			} else {
				nRegular++
			}
		case Regular:
			if isCounter {
				nCounter++
			} else {
				nRegular++
			}
		default:
			return "column " + c.Name + " has an invalid kind"
		}
	}
	if len(t.PartitionKey) == 0 {
		return "PRIMARY KEY is missing"
	}
	if nPK != len(t.PartitionKey) || nCK != len(t.Clustering) {
		return "primary key does not match the column kinds"
	}
	for i, name := range t.PartitionKey {
		c, ok := t.Column(name)
		if !ok || c.Kind != PartitionKey {
			return "partition key column " + name + " is not a partition key column"
		}
		for _, prev := range t.PartitionKey[:i] {
			if prev == name {
				return "column " + name + " appears twice in the PRIMARY KEY"
			}
		}
	}
	for i, cc := range t.Clustering {
		c, ok := t.Column(cc.Name)
		if !ok || c.Kind != Clustering {
			return "clustering column " + cc.Name + " is not a clustering column"
		}
		if cc.Order != Asc && cc.Order != Desc {
			return "clustering column " + cc.Name + " has an invalid order"
		}
		for _, prev := range t.Clustering[:i] {
			if prev.Name == cc.Name {
				return "column " + cc.Name + " appears twice in the PRIMARY KEY"
			}
		}
	}
	if nStatic > 0 && nCK == 0 {
		return "static columns are only allowed in tables with clustering columns"
	}
	if nCounter > 0 && nRegular > 0 {
		return "cannot mix counter and non-counter columns outside the PRIMARY KEY"
	}
	if r := optionsReason(t.Options); r != "" {
		return r
	}
	for i := range t.DroppedColumns {
		d := &t.DroppedColumns[i]
		if r := columnNameReason(d.Name); r != "" {
			return "dropped " + r
		}
		for _, prev := range t.DroppedColumns[:i] {
			if prev.Name == d.Name {
				return "dropped column " + d.Name + " recorded twice"
			}
		}
		if r := validateType(d.Type, 0, false); r != "" {
			return "dropped column " + d.Name + ": " + r
		}
		if len(typeRefs(nil, d.Type)) > 0 {
			return "dropped column " + d.Name + " refers to a user type"
		}
	}
	return ""
}
