package guardrails

import (
	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/schema"
)

// dynamic_data_masking_enabled is Cassandra's cassandra.yaml flag for
// column masks rather than one of its guardrails, but it is replicated and
// set like them. As in Cassandra it refuses what gives a column a mask
// (CREATE TABLE, ALTER TABLE ADD or ALTER ... MASKED WITH) and never DROP
// MASKED, so masks can always be removed. metalog refuses CREATE TABLE
// ... LIKE of a masked table too, which Cassandra's copy lets through.

// maskingSetting is the setting's name.
const maskingSetting = "dynamic_data_masking_enabled"

// masking refuses a statement that masks column (non-empty) while
// dynamic_data_masking_enabled is false, with Cassandra's message and
// how to enable the setting.
func (c *checker) masking(column string) error {
	if column == "" || c.s.DynamicDataMaskingEnabled {
		return nil
	}
	return fail(maskingSetting, "Cannot mask columns because dynamic data masking is not enabled: "+
		c.in.Statement.Kind()+" "+c.object()+" masks column "+clip.String(column)+
		". You can enable it with the dynamic_data_masking_enabled setting (metalog guardrails set dynamic_data_masking_enabled=true, or guardrails: in the config file)")
}

// createTableMasks returns the first masked column of st, or "".
func createTableMasks(st *schema.CreateTable) string {
	for _, cd := range st.Columns {
		if cd.Mask != nil {
			return cd.Name
		}
	}
	return ""
}

// alterTableMasks returns the column st masks (ADD with a mask or ALTER
// ... MASKED WITH), or "" (DROP MASKED included).
func alterTableMasks(st *schema.AlterTable) string {
	if st.Mask != nil && st.Mask.Mask != nil {
		return st.Mask.Column
	}
	for _, cd := range st.Add {
		if cd.Mask != nil {
			return cd.Name
		}
	}
	return ""
}

// copiedMasks returns the first masked column of the table CREATE TABLE
// ... LIKE created, or "".
func (c *checker) copiedMasks() string {
	t, ok := c.table()
	if !ok {
		return ""
	}
	for i := range t.Columns {
		if t.Columns[i].Mask != nil {
			return t.Columns[i].Name
		}
	}
	return ""
}
