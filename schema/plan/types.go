package plan

import (
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/schema"
)

// Reasons a user type cannot change in place, naming Cassandra's rule.
const (
	ruleFieldDrop   = "Cassandra cannot drop a field of a user type (ALTER TYPE only adds and renames fields; to rename one, run ALTER TYPE ... RENAME before planning)"
	ruleFieldType   = "the type of a field of a user type cannot be altered (Cassandra disabled ALTER TYPE ... ALTER ... TYPE, CASSANDRA-12443)"
	ruleFieldOrder  = "the fields of a user type are positional: Cassandra stores a value as its fields in order, and ALTER TYPE ... ADD only appends"
	ruleKeyType     = "a user type in a partition key gains no fields (Cassandra's and ScyllaDB's rule: a partition key is hashed from its bytes, which a new field changes)"
	ruleTypeInUse   = "a user type cannot be dropped while a table or another type uses it (Cassandra refuses DROP TYPE), so what uses a recreated type is recreated too"
	ruleKeptTypeUse = "Prune is off, so it is kept, and a kept object cannot be recreated"
	ruleKeptColumn  = "DropColumns is off, so the column is kept, and a table with a kept column is not recreated"
)

// analyzeTypes compares the types of both sides: the new ones are
// created, those of both gain their new fields or are recreated, and the
// current ones the desired keyspace lacks are dropped with Prune.
func (kp *ksPlan) analyzeTypes() {
	ks := kp.want.Name
	for _, ut := range kp.want.UserTypes() {
		old, ok := kp.cur.UserType(ut.Name)
		if !ok {
			continue
		}
		adds, reasons := typeChange(old, ut)
		for _, r := range reasons {
			kp.p.cannot(typeName(ks, ut.Name), r, true)
		}
		if len(reasons) == 0 && len(adds) > 0 {
			if table, column := schema.KeyUserOf(kp.cur, ut.Name); table != "" {
				r := "it gains fields and is used in the partition key of table " + q(ks) + "." + q(table) + " (column " + clipName(column) + "): " + ruleKeyType
				kp.p.cannot(typeName(ks, ut.Name), r, true)
				reasons = append(reasons, r)
			}
		}
		if len(reasons) > 0 {
			kp.recreateTypes[ut.Name] = strings.Join(reasons, "; ")
		} else if len(adds) > 0 {
			kp.typeAdds[ut.Name] = adds
		}
	}
	for _, ut := range kp.cur.UserTypes() {
		if _, ok := kp.want.UserType(ut.Name); ok {
			continue
		}
		if kp.p.opt.Prune {
			kp.dropTypes[ut.Name] = true
		} else {
			kp.p.note("type %s is not in the desired schema: kept (--prune drops it)", typeName(ks, ut.Name))
		}
	}
}

// typeChange returns the fields want appends to cur, or the reasons it
// cannot be altered into want in place: a field removed or retyped, or
// the fields reordered.
func typeChange(cur, want *schema.UserType) (adds []schema.Field, reasons []string) {
	for _, f := range cur.Fields {
		wf, ok := want.Field(f.Name)
		switch {
		case !ok:
			reasons = append(reasons, "field "+clipName(f.Name)+" is removed: "+ruleFieldDrop)
		case !schema.TypesEqual(f.Type, wf.Type):
			reasons = append(reasons, "field "+clipName(f.Name)+" changes type from "+f.Type.String()+" to "+wf.Type.String()+": "+ruleFieldType)
		}
	}
	if len(reasons) > 0 {
		return nil, reasons
	}
	for i, f := range cur.Fields {
		if want.Fields[i].Name != f.Name {
			return nil, []string{"the fields are reordered, from (" + fieldNames(cur.Fields) + ") to (" + fieldNames(want.Fields) + "): " + ruleFieldOrder}
		}
	}
	return want.Fields[len(cur.Fields):], nil
}

// fieldNames lists the quoted field names, comma-separated.
func fieldNames(fields []schema.Field) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = clipName(f.Name)
	}
	return strings.Join(names, ", ")
}

// clipName quotes a column or field name for a message, cut as
// clip.String cuts user input.
func clipName(name string) string { return clip.String(q(name)) }

// typeGoing reports whether the plan drops current type name (pruned or
// recreated).
func (kp *ksPlan) typeGoing(name string) bool {
	_, re := kp.recreateTypes[name]
	return re || kp.dropTypes[name]
}

// cascade extends the recreation of types to what uses them in the
// current keyspace, as DROP TYPE requires: a type of both sides using a
// recreated type is recreated, and so is a table of both sides with a
// column that uses one, unless the desired table drops those columns. A
// kept object (without Prune) that uses one cannot be recreated, which is
// reported. It runs to a fixed point, as a recreated type can be used by
// other types.
func (kp *ksPlan) cascade() {
	if kp.cur == nil || len(kp.recreateTypes) == 0 {
		return
	}
	ks := kp.want.Name
	for changed := true; changed; {
		changed = false
		for _, ut := range kp.cur.UserTypes() {
			if kp.typeGoing(ut.Name) {
				continue
			}
			for _, f := range ut.Fields {
				used := goingRef(kp, f.Type)
				if used == "" {
					continue
				}
				if _, inWant := kp.want.UserType(ut.Name); !inWant {
					kp.p.cannot(typeName(ks, used), "it is recreated, but type "+typeName(ks, ut.Name)+", which the desired schema lacks, uses it: "+ruleKeptTypeUse, false)
					break
				}
				kp.recreateTypes[ut.Name] = "field " + clipName(f.Name) + " uses type " + typeName(ks, used) + ", which is recreated: " + ruleTypeInUse
				changed = true
				break
			}
		}
	}
	for _, t := range tables(kp.cur) {
		if _, re := kp.recreateTables[t.Name]; re || kp.dropTables[t.Name] {
			continue
		}
		d, inWant := kp.alters[t.Name]
		for _, c := range t.Columns {
			used := goingRef(kp, c.Type)
			if used == "" || inWant && contains(d.drop, c.Name) {
				continue
			}
			if !inWant {
				kp.p.cannot(typeName(ks, used), "it is recreated, but table "+tableName(t)+", which the desired schema lacks, uses it: "+ruleKeptTypeUse, false)
				break
			}
			if contains(d.kept, c.Name) {
				kp.p.cannot(typeName(ks, used), "it is recreated, but column "+clipName(c.Name)+" of table "+tableName(t)+", which the desired table lacks, uses it: "+ruleKeptColumn, false)
				break
			}
			kp.recreateTables[t.Name] = append(kp.recreateTables[t.Name], "column "+clipName(c.Name)+" uses type "+typeName(ks, used)+", which is recreated: "+ruleTypeInUse)
			delete(kp.alters, t.Name)
			break
		}
	}
}

// goingRef returns the first user type that t uses directly and the plan
// drops, or "".
func goingRef(kp *ksPlan, t schema.Type) string {
	for _, ref := range schema.UserTypeRefs(t) {
		if kp.typeGoing(ref) {
			return ref
		}
	}
	return ""
}

// keepUsedTypes keeps the types the plan would prune that a kept column
// uses, directly or through other types: Cassandra refuses DROP TYPE of
// a type in use, and the column stays (DropColumns is off).
func (kp *ksPlan) keepUsedTypes() {
	type use struct{ typ, by string } // type typ is used by what by names
	var work []use
	for _, t := range tables(kp.cur) {
		d, ok := kp.alters[t.Name]
		if !ok {
			continue
		}
		for _, name := range d.kept {
			c, _ := t.Column(name)
			for _, ref := range schema.UserTypeRefs(c.Type) {
				work = append(work, use{ref, "column " + clipName(name) + " of table " + tableName(t)})
			}
		}
	}
	for len(work) > 0 {
		u := work[0]
		work = work[1:]
		if !kp.dropTypes[u.typ] {
			continue
		}
		delete(kp.dropTypes, u.typ)
		kp.p.note("type %s is not in the desired schema but is kept: %s, which is kept, uses it", typeName(kp.cur.Name, u.typ), u.by)
		ut, _ := kp.cur.UserType(u.typ)
		for _, f := range ut.Fields {
			for _, ref := range schema.UserTypeRefs(f.Type) {
				work = append(work, use{ref, "type " + typeName(kp.cur.Name, u.typ)})
			}
		}
	}
}
