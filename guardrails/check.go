package guardrails

import (
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/schema"
)

// ErrFailed matches (with errors.Is) every *Failure: a statement a
// guardrail refuses. The API maps it to FailedPrecondition.
var ErrFailed = errors.New("guardrails: guardrail failed")

// Failure is a guardrail refusing a statement.
type Failure struct {
	// Guardrail is the setting that refused, e.g. "tables_fail_threshold".
	Guardrail string
	// Message is the whole error text, in Cassandra's wording:
	// "Guardrail <setting> violated: <reason naming the object and the
	// threshold>", and for a threshold of a per-keyspace override the
	// scope after it: " (keyspace shop: tables_fail_threshold=2)".
	Message string
	// Scope is the scope of the per-keyspace override whose threshold
	// refused ("shop", "tenant_*"); empty for a cluster setting.
	Scope string
}

// Error returns f.Message.
func (f *Failure) Error() string { return f.Message }

// Is reports whether target is ErrFailed.
func (f *Failure) Is(target error) bool { return target == ErrFailed }

// Warning is a guardrail warning about an accepted statement, returned to
// the client with its result.
type Warning struct {
	// Guardrail is the setting that warned, e.g. "tables_warn_threshold";
	// empty for a statement's own warning that rides along with the
	// guardrails' (CREATE TABLE ... LIKE ... WITH INDEXES naming the
	// custom indexes it did not copy).
	Guardrail string
	// Message is the whole warning text, in Cassandra's wording:
	// "Guardrail <setting> violated: <reason>".
	Message string
}

// String returns w.Message.
func (w Warning) String() string { return w.Message }

// Input is what Check looks at: one statement and what applying it did.
type Input struct {
	// Statement is the statement as applied (after Prepare).
	Statement schema.Statement
	// Result is the result schema.Apply returned for it.
	Result schema.Result
	// Before is the schema the statement was applied to.
	Before schema.Schema
	// After is the schema schema.Apply returned.
	After schema.Schema
	// MaxMutationSize is the max_mutation_size setting in bytes, the
	// limit of the metadata_size guardrail; 0 or less turns it off.
	MaxMutationSize int64
	// Overhead is what the encoded metadata holds besides the schema
	// records of After (record framing, remembered requests, headers), so
	// that After.EncodedSize()+Overhead bounds the snapshot size.
	Overhead int64
	// Keyspaces are the per-keyspace overrides; the one that applies to
	// the changed keyspace replaces the cluster's per-object thresholds
	// and bounds the keyspace's tables.
	Keyspaces Overrides
	// ErrorsOnly asks for the failure alone: Check builds no warning (a
	// pre-check, which drops them, saves their messages' allocations).
	ErrorsOnly bool
}

// MetadataSize is the name of metalog's own guardrail on the encoded size
// of the schema (schema.Schema.EncodedSize): a change that grows it warns
// above 75% of max_mutation_size and is refused above 100%, before a
// snapshot of the metadata could no longer be written.
const MetadataSize = "metadata_size"

// Check runs the guardrails of s on a statement that schema.Apply has
// applied, and returns the warnings and, when a guardrail refuses the
// statement, a *Failure (matching ErrFailed) together with the warnings
// found before it; the caller then discards in.After. A statement that
// changed nothing (Result.Applied false) passes silently.
//
// Check is deterministic and O(changed): counts come from the after
// schema's incremental counters (TableCount, KeyspaceCount, EncodedSize)
// and from the objects the statement names, looked up in in.After; it never
// walks all tables. Only statements that grow a thing check its limit:
// CREATE TABLE checks tables_*, ALTER TABLE ADD columns_per_table_*, and
// so on. It allocates nothing when no guardrail triggers, except for
// CREATE INDEX (the table's index list) and NetworkTopologyStrategy
// keyspaces (their data centre names, sorted), and for a statement giving
// compression while uncompressed_tables_enabled is false (the compression
// map's strings).
func Check(s Settings, in Input) ([]Warning, error) {
	if !in.Result.Applied || in.Statement == nil {
		return nil, nil
	}
	c := checker{s: s, in: in}
	c.s, c.ks, c.scoped = in.Keyspaces.Effective(s, in.Result.Keyspace)
	err := c.statement()
	if err == nil {
		err = c.metadataSize()
	}
	return c.warnings, err
}

// checker holds copies of Check's arguments (not pointers to them, which
// would move them to the heap).
type checker struct {
	s        Settings // effective in the changed keyspace
	in       Input
	warnings []Warning
	ks       Override // the override that applies, if scoped
	scoped   bool
}

// decorate prefixes msg with the guardrail that triggered, as Cassandra
// words every guardrail message.
func decorate(guardrail, msg string) string {
	return "Guardrail " + guardrail + " violated: " + msg
}

// warns reports whether the caller wants warnings: a call site tests it
// before it builds a warning's message.
func (c *checker) warns() bool { return !c.in.ErrorsOnly }

// warn records a warning of guardrail.
func (c *checker) warn(guardrail, msg string) {
	c.warnings = append(c.warnings, Warning{Guardrail: guardrail, Message: decorate(guardrail, msg)})
}

// fail returns the *Failure of guardrail.
func fail(guardrail, msg string) error {
	return &Failure{Guardrail: guardrail, Message: decorate(guardrail, msg)}
}

// disabled refuses a statement for a flag that is off, as Cassandra's
// EnableFlag does ("<feature> is not allowed"), naming the statement.
func (c *checker) disabled(guardrail, feature string) error {
	return fail(guardrail, feature+" is not allowed: "+c.in.Statement.Kind()+" "+c.object())
}

// object names what the statement changed, from the result.
func (c *checker) object() string {
	r := &c.in.Result
	name := r.Table
	if r.Name != "" {
		name = r.Name
	}
	if name == "" {
		return clip.String(r.Keyspace)
	}
	return clip.String(r.Keyspace) + "." + clip.String(name)
}

// limit is a pair of thresholds and their messages. Messages take the
// object, the value and the threshold crossed.
type limit struct {
	warn, fail       string
	warnMsg, failMsg func(what string, value, threshold int64) string
}

// itoa formats n for a message.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// max refuses value above failAt or warns above warnAt (-1 disables each).
// The object's name is the concatenation of what, built only when a
// threshold is crossed so that the silent path does not allocate.
func (c *checker) max(l *limit, warnAt, failAt, value int64, what ...string) error {
	if failAt != Disabled && value > failAt {
		return c.scopeFailure(fail(l.fail, l.failMsg(join(what), value, failAt)+c.scopeOf(l.fail)), l.fail)
	}
	if warnAt != Disabled && value > warnAt && c.warns() {
		c.warn(l.warn, l.warnMsg(join(what), value, warnAt)+c.scopeOf(l.warn))
	}
	return nil
}

// min refuses value below failAt or warns below warnAt, like max.
func (c *checker) min(l *limit, warnAt, failAt, value int64, what ...string) error {
	if failAt != Disabled && value < failAt {
		return fail(l.fail, l.failMsg(join(what), value, failAt))
	}
	if warnAt != Disabled && value < warnAt && c.warns() {
		c.warn(l.warn, l.warnMsg(join(what), value, warnAt))
	}
	return nil
}

// join concatenates the parts of an object's name for a message, each
// name cut by clip.String (the words between them are short).
func join(what []string) string {
	if slices.ContainsFunc(what, func(w string) bool { return len(w) > clip.Max }) {
		clipped := make([]string, len(what))
		for i, w := range what {
			clipped[i] = clip.String(w)
		}
		what = clipped
	}
	return strings.Join(what, "")
}

var (
	keyspacesLimit = limit{
		warn: "keyspaces_warn_threshold", fail: "keyspaces_fail_threshold",
		warnMsg: func(what string, v, t int64) string {
			return "Creating keyspace " + what + ", current number of keyspaces " + itoa(v) + " exceeds warning threshold of " + itoa(t) + "."
		},
		failMsg: func(what string, v, t int64) string {
			return "Cannot have more than " + itoa(t) + " keyspaces, aborting the creation of keyspace " + what
		},
	}
	tablesLimit = limit{
		warn: "tables_warn_threshold", fail: "tables_fail_threshold",
		warnMsg: func(what string, v, t int64) string {
			return "Creating table " + what + ", current number of tables " + itoa(v) + " exceeds warning threshold of " + itoa(t) + "."
		},
		failMsg: func(what string, v, t int64) string {
			return "Cannot have more than " + itoa(t) + " tables, aborting the creation of table " + what
		},
	}
	columnsLimit = limit{
		warn: "columns_per_table_warn_threshold", fail: "columns_per_table_fail_threshold",
		warnMsg: func(what string, v, t int64) string {
			return "The table " + what + " has " + itoa(v) + " columns, this exceeds the warning threshold of " + itoa(t) + "."
		},
		failMsg: func(what string, v, t int64) string {
			return "Tables cannot have more than " + itoa(t) + " columns, but " + itoa(v) + " provided for table " + what
		},
	}
	indexesLimit = limit{
		warn: "secondary_indexes_per_table_warn_threshold", fail: "secondary_indexes_per_table_fail_threshold",
		warnMsg: func(what string, v, t int64) string {
			return "Creating secondary index " + what + ", current number of indexes " + itoa(v) + " exceeds warning threshold of " + itoa(t) + "."
		},
		failMsg: func(what string, v, t int64) string {
			return "Tables cannot have more than " + itoa(t) + " secondary indexes, aborting the creation of secondary index " + what
		},
	}
	fieldsLimit = limit{
		warn: "fields_per_udt_warn_threshold", fail: "fields_per_udt_fail_threshold",
		warnMsg: func(what string, v, t int64) string {
			return "The user type " + what + " has " + itoa(v) + " columns, this exceeds the warning threshold of " + itoa(t) + "."
		},
		failMsg: func(what string, v, t int64) string {
			return "User types cannot have more than " + itoa(t) + " columns, but " + itoa(v) + " provided for user type " + what + "."
		},
	}
	vectorLimit = limit{
		warn: "vector_dimensions_warn_threshold", fail: "vector_dimensions_fail_threshold",
		warnMsg: func(what string, v, t int64) string {
			return what + " has a vector of " + itoa(v) + " dimensions, this exceeds the warning threshold of " + itoa(t) + "."
		},
		failMsg: func(what string, v, t int64) string {
			return what + " has a vector of " + itoa(v) + " dimensions, this exceeds the failure threshold of " + itoa(t) + "."
		},
	}
	minRFLimit = limit{
		warn: "minimum_replication_factor_warn_threshold", fail: "minimum_replication_factor_fail_threshold",
		warnMsg: func(what string, v, t int64) string {
			return "The keyspace " + what + " has a replication factor of " + itoa(v) + ", below the warning threshold of " + itoa(t) + "."
		},
		failMsg: func(what string, v, t int64) string {
			return "The keyspace " + what + " has a replication factor of " + itoa(v) + ", below the failure threshold of " + itoa(t) + "."
		},
	}
	maxRFLimit = limit{
		warn: "maximum_replication_factor_warn_threshold", fail: "maximum_replication_factor_fail_threshold",
		warnMsg: func(what string, v, t int64) string {
			return "The keyspace " + what + " has a replication factor of " + itoa(v) + ", above the warning threshold of " + itoa(t) + "."
		},
		failMsg: func(what string, v, t int64) string {
			return "The keyspace " + what + " has a replication factor of " + itoa(v) + ", above the failure threshold of " + itoa(t) + "."
		},
	}
)

// statement runs the checks of the statement's kind: only statements that
// add or grow a thing check its limit, and only the disabled features
// refuse the others.
func (c *checker) statement() error {
	s, res := &c.s, &c.in.Result
	switch st := c.in.Statement.(type) {
	case *schema.CreateKeyspace:
		if err := c.max(&keyspacesLimit, s.KeyspacesWarnThreshold, s.KeyspacesFailThreshold, int64(c.in.After.KeyspaceCount()), res.Keyspace); err != nil {
			return err
		}
		return c.replication()
	case *schema.AlterKeyspace:
		if st.Replication != nil {
			return c.replication()
		}
	case *schema.DropKeyspace:
		if !s.DropKeyspaceEnabled {
			return c.disabled("drop_keyspace_enabled", "DROP KEYSPACE functionality")
		}
	case *schema.CreateTable:
		if err := c.masking(createTableMasks(st)); err != nil {
			return err
		}
		return c.createTable(st.Options)
	case *schema.CreateTableLike:
		if err := c.masking(c.copiedMasks()); err != nil {
			return err
		}
		return c.createTable(st.Options)
	case *schema.AlterTable:
		if err := c.masking(alterTableMasks(st)); err != nil {
			return err
		}
		return c.alterTable(st)
	case *schema.DropTable:
		if !s.DropTruncateTableEnabled {
			return c.disabled("drop_truncate_table_enabled", "DROP and TRUNCATE TABLE functionality")
		}
	case *schema.CreateType:
		return c.userType("")
	case *schema.AlterType:
		if st.Add != nil {
			return c.userType(st.Add.Name)
		}
	case *schema.CreateIndex:
		return c.createIndex()
	case *schema.CreateFunction, *schema.CreateAggregate:
		return c.userDefinedFunctions()
	case *schema.CreateView:
		return c.createView(st)
	case *schema.AlterView:
		if t, ok := c.table(); ok {
			return c.properties(st.Options, t)
		}
	}
	return nil
}

// replication checks the strategy and factors of the changed keyspace.
func (c *checker) replication() error {
	k, ok := c.in.After.Keyspace(c.in.Result.Keyspace)
	if !ok {
		return nil
	}
	s := &c.s
	r := k.Replication
	switch r.Class {
	case schema.SimpleStrategy:
		if !s.SimpleStrategyEnabled {
			return c.disabled("simplestrategy_enabled", "SimpleStrategy")
		}
		return c.factor(r.Options["replication_factor"], k.Name)
	case schema.NetworkTopologyStrategy:
		if s.MinimumReplicationFactorWarnThreshold == Disabled && s.MinimumReplicationFactorFailThreshold == Disabled &&
			s.MaximumReplicationFactorWarnThreshold == Disabled && s.MaximumReplicationFactorFailThreshold == Disabled {
			return nil
		}
		dcs := make([]string, 0, len(r.Options))
		for dc := range r.Options {
			dcs = append(dcs, dc)
		}
		sort.Strings(dcs)
		for _, dc := range dcs {
			var err error
			if dc == "replication_factor" {
				err = c.factor(r.Options[dc], k.Name, " by default in every data centre")
			} else {
				err = c.factor(r.Options[dc], k.Name, " in data centre ", dc)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// factor checks one replication factor, given as its option text, against
// the minimum and maximum thresholds; what names where it applies.
func (c *checker) factor(text string, what ...string) error {
	rf, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return nil // schema normalises factors; a custom class has none
	}
	s := &c.s
	if err := c.min(&minRFLimit, s.MinimumReplicationFactorWarnThreshold, s.MinimumReplicationFactorFailThreshold, rf, what...); err != nil {
		return err
	}
	return c.max(&maxRFLimit, s.MaximumReplicationFactorWarnThreshold, s.MaximumReplicationFactorFailThreshold, rf, what...)
}

// table returns the changed table in the after schema.
func (c *checker) table() (*schema.Table, bool) {
	return c.in.After.Table(c.in.Result.Keyspace, c.in.Result.Table)
}

// createTable checks the created table: the properties the statement
// sets (opts), the number of tables, its number of columns and their
// vector dimensions.
func (c *checker) createTable(opts map[string]string) error {
	t, ok := c.table()
	if !ok {
		return nil
	}
	if err := c.properties(opts, t); err != nil {
		return err
	}
	s := &c.s
	// The keyspace's own limit first: when both refuse, the narrower
	// one says more.
	if err := c.keyspaceTables(t); err != nil {
		return err
	}
	if err := c.max(&tablesLimit, s.TablesWarnThreshold, s.TablesFailThreshold, int64(c.in.After.TableCount()), t.Keyspace, ".", t.Name); err != nil {
		return err
	}
	if err := c.max(&columnsLimit, s.ColumnsPerTableWarnThreshold, s.ColumnsPerTableFailThreshold, int64(len(t.Columns)), t.Keyspace, ".", t.Name); err != nil {
		return err
	}
	for i := range t.Columns {
		if err := c.vector(t.Columns[i].Type, "Column ", t.Columns[i].Name, " of table ", t.Keyspace, ".", t.Name); err != nil {
			return err
		}
	}
	return nil
}

// alterTable checks ALTER TABLE against alter_table_enabled (for column
// changes) and the property sets, and for ADD the number of columns and the
// added columns' vector dimensions.
func (c *checker) alterTable(st *schema.AlterTable) error {
	s := &c.s
	if !s.AlterTableEnabled && (len(st.Add) > 0 || len(st.Drop) > 0 || len(st.Rename) > 0) {
		return c.disabled("alter_table_enabled", "User access to ALTER TABLE statement for column mutation")
	}
	t, ok := c.table()
	if !ok {
		return nil
	}
	if err := c.properties(st.Options, t); err != nil {
		return err
	}
	if len(st.Add) == 0 {
		return nil
	}
	if err := c.max(&columnsLimit, s.ColumnsPerTableWarnThreshold, s.ColumnsPerTableFailThreshold, int64(len(t.Columns)), t.Keyspace, ".", t.Name); err != nil {
		return err
	}
	for _, cd := range st.Add {
		if col, ok := t.Column(cd.Name); ok {
			if err := c.vector(col.Type, "Column ", col.Name, " of table ", t.Keyspace, ".", t.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// properties checks the table properties a CREATE or ALTER TABLE gives
// against the warned and disallowed sets, and compression against
// uncompressed_tables_enabled (on t, the table as applied).
func (c *checker) properties(opts map[string]string, t *schema.Table) error {
	if len(opts) == 0 {
		return nil
	}
	s := &c.s
	if !s.UncompressedTablesEnabled {
		for k := range opts {
			if strings.EqualFold(k, "compression") && compressionDisabled(t.Options()["compression"]) {
				return c.disabled("uncompressed_tables_enabled", "Uncompressed table")
			}
		}
	}
	if s.TablePropertiesDisallowed.Len() == 0 && s.TablePropertiesWarned.Len() == 0 {
		return nil
	}
	var disallowed, warned []string
	for k := range opts {
		k = strings.ToLower(k)
		switch {
		case s.TablePropertiesDisallowed.Contains(k):
			disallowed = append(disallowed, k)
		case s.TablePropertiesWarned.Contains(k):
			warned = append(warned, k)
		}
	}
	if len(disallowed) > 0 {
		sort.Strings(disallowed)
		return fail("table_properties_disallowed", "Provided values ["+strings.Join(disallowed, ", ")+"] are not allowed for Table Properties (disallowed values are: ["+strings.Join(s.TablePropertiesDisallowed.Names(), ", ")+"])")
	}
	if len(warned) > 0 && c.warns() {
		sort.Strings(warned)
		c.warn("table_properties_warned", "Provided values ["+strings.Join(warned, ", ")+"] are not recommended for Table Properties (warned values are: ["+strings.Join(s.TablePropertiesWarned.Names(), ", ")+"])")
	}
	return nil
}

// compressionDisabled reports whether the canonical compression map text
// ({'class': '...', 'enabled': 'false'}) turns compression off.
func compressionDisabled(text string) bool {
	var strs []string
	var buf [8]string
	strs = buf[:0]
	for i := 0; i < len(text); i++ {
		if text[i] != '\'' {
			continue
		}
		var b strings.Builder
		j := i + 1
		for ; j < len(text); j++ {
			if text[j] == '\'' {
				if j+1 < len(text) && text[j+1] == '\'' {
					b.WriteByte('\'')
					j++
					continue
				}
				break
			}
			b.WriteByte(text[j])
		}
		strs = append(strs, b.String())
		i = j
	}
	for i := 0; i+1 < len(strs); i += 2 {
		if strs[i] == "enabled" && strings.EqualFold(strs[i+1], "false") {
			return true
		}
	}
	return false
}

// vector checks the largest vector dimension in t (vectors nested in
// collections, tuples and vectors included; user types are checked when
// they are created).
func (c *checker) vector(t schema.Type, what ...string) error {
	s := &c.s
	if s.VectorDimensionsWarnThreshold == Disabled && s.VectorDimensionsFailThreshold == Disabled {
		return nil
	}
	d := maxDimension(t, 0)
	if d == 0 {
		return nil
	}
	return c.max(&vectorLimit, s.VectorDimensionsWarnThreshold, s.VectorDimensionsFailThreshold, int64(d), what...)
}

// maxDimension returns the largest vector dimension in t, 0 if it holds no
// vector. depth bounds the walk, as schema bounds type nesting.
func maxDimension(t schema.Type, depth int) int {
	if depth > schema.MaxTypeDepth {
		return 0
	}
	switch t := t.(type) {
	case schema.VectorType:
		return max(t.Dimension, maxDimension(t.Elem, depth+1))
	case schema.ListType:
		return maxDimension(t.Elem, depth+1)
	case schema.SetType:
		return maxDimension(t.Elem, depth+1)
	case schema.MapType:
		return max(maxDimension(t.Key, depth+1), maxDimension(t.Value, depth+1))
	case schema.FrozenType:
		return maxDimension(t.Inner, depth+1)
	case schema.TupleType:
		m := 0
		for _, e := range t.Elems {
			m = max(m, maxDimension(e, depth+1))
		}
		return m
	}
	return 0
}

// userType checks the created type, or the field added to it.
func (c *checker) userType(added string) error {
	k, ok := c.in.After.Keyspace(c.in.Result.Keyspace)
	if !ok {
		return nil
	}
	ut, ok := k.UserType(c.in.Result.Name)
	if !ok {
		return nil
	}
	s := &c.s
	if err := c.max(&fieldsLimit, s.FieldsPerUDTWarnThreshold, s.FieldsPerUDTFailThreshold, int64(len(ut.Fields)), ut.Keyspace, ".", ut.Name); err != nil {
		return err
	}
	for i := range ut.Fields {
		f := &ut.Fields[i]
		if added != "" && f.Name != added {
			continue
		}
		if err := c.vector(f.Type, "Field ", f.Name, " of user type ", ut.Keyspace, ".", ut.Name); err != nil {
			return err
		}
	}
	return nil
}

// createIndex checks CREATE INDEX against secondary_indexes_enabled and
// the number of indexes of the table.
func (c *checker) createIndex() error {
	s, res := &c.s, &c.in.Result
	if !s.SecondaryIndexesEnabled {
		return c.disabled("secondary_indexes_enabled", "User creation of secondary indexes")
	}
	if s.SecondaryIndexesPerTableWarnThreshold == Disabled && s.SecondaryIndexesPerTableFailThreshold == Disabled {
		return nil
	}
	k, ok := c.in.After.Keyspace(res.Keyspace)
	if !ok {
		return nil
	}
	n := int64(len(k.TableIndexes(res.Table)))
	return c.max(&indexesLimit, s.SecondaryIndexesPerTableWarnThreshold, s.SecondaryIndexesPerTableFailThreshold, n, res.Keyspace, ".", res.Name)
}

// metadataSize checks a change that grows the encoded schema against
// max_mutation_size.
func (c *checker) metadataSize() error {
	limit := c.in.MaxMutationSize
	size := c.in.After.EncodedSize() + c.in.Overhead
	if !c.s.MetadataSizeEnabled || limit <= 0 || c.in.After.EncodedSize() <= c.in.Before.EncodedSize() {
		return nil
	}
	if size > limit {
		return fail(MetadataSize, "Cannot have more than "+itoa(limit)+" bytes of metadata (max_mutation_size), aborting "+c.in.Statement.Kind()+" "+c.object()+": the metadata would be "+itoa(size)+" bytes")
	}
	if warnAt := limit - limit/4; size > warnAt && c.warns() {
		c.warn(MetadataSize, "After "+c.in.Statement.Kind()+" "+c.object()+" the metadata is "+itoa(size)+" bytes, this exceeds the warning threshold of "+itoa(warnAt)+" bytes (75% of max_mutation_size "+itoa(limit)+").")
	}
	return nil
}
