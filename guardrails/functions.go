package guardrails

// UserDefinedFunctions is the name of the setting that allows CREATE
// FUNCTION and CREATE AGGREGATE.
const UserDefinedFunctions = "user_defined_functions_enabled"

// userDefinedFunctions refuses CREATE FUNCTION and CREATE AGGREGATE while
// user_defined_functions_enabled is false (its default, as in Cassandra,
// whose message it keeps), saying how to turn it on. DROP FUNCTION and
// DROP AGGREGATE are not checked, so that an operator can clean up with
// the setting off (Cassandra does not check them either).
func (c *checker) userDefinedFunctions() error {
	if c.s.UserDefinedFunctionsEnabled {
		return nil
	}
	return fail(UserDefinedFunctions, "User-defined functions are disabled: "+c.in.Statement.Kind()+" "+c.object()+
		" is not allowed; set "+UserDefinedFunctions+"=true to enable (metalog guardrails set "+UserDefinedFunctions+
		"=true, or "+UserDefinedFunctions+": true under guardrails: in the config file)")
}
