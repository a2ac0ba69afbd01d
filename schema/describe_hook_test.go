package schema_test

import (
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// init hands the DESCRIBE functions to the tests of package schema (see
// export_test.go), which cannot import package describe.
func init() {
	schema.DescribeSchema = describe.Schema
	schema.DescribeKeyspace = describe.Keyspace
	schema.DescribeTable = describe.Table
	schema.DescribeUserType = describe.UserType
	schema.DescribeIndex = describe.Index
	schema.DescribeTriggers = describe.Triggers
}
