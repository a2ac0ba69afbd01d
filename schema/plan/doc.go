// Package plan is the declarative schema planner: given the current schema
// and a desired one (usually CQL files, read with Load or LoadSources),
// Diff plans the DDL statements that turn the first into the second, in an
// order that applies, making every change in place where Cassandra can and
// refusing (or, with Options.AllowRecreate, planning as DROP and CREATE)
// what it cannot. What the desired schema lacks is kept unless the options
// say to drop it: Options.Prune for objects, Options.DropColumns for
// columns.
//
// It owns the rules of planning: what differs, how each difference is
// made (which statement, in which order), what cannot be made in place
// and why, and what is destructive. It is pure, like package schema: no
// I/O, and a plan depends only on its inputs. It does not apply plans,
// ask for confirmation or decide who may run them (the server and the CLI
// do), and it does not own the DDL rules themselves: package schema's
// Apply does, and Diff checks every plan against it before returning it.
// docs/planner.md describes the rules for users.
//
// Usage:
//
//	desired, err := plan.Load(fileText)
//	if err != nil {
//		return err // a *plan.LoadError: statement, line, reason
//	}
//	p, err := plan.Diff(current, desired, plan.Options{Prune: true})
//	var imp *plan.ImpossibleError
//	if errors.As(err, &imp) {
//		// imp.Changes say what cannot change in place and why
//	}
//	for _, w := range p.Warnings {
//		fmt.Println("warning:", w) // what the plan loses
//	}
//	for _, n := range p.Notes {
//		fmt.Println("note:", n) // what it keeps, or rebuilds
//	}
//	for _, st := range p.Statements {
//		fmt.Println(st.CQL + ";") // send them in order
//	}
package plan
