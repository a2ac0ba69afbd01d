// Package plan is metalog's declarative schema planner: Diff plans the DDL
// statements that turn the current schema into a desired one, usually read
// from CQL files with Load or LoadSources.
//
// It owns the rules of planning: what differs, which statement makes each
// change and in which order, what cannot change in place and why, and what
// is destructive. It does not own the DDL rules (package schema's Apply does,
// and Diff checks every plan against it before returning it), and it does
// not apply plans or decide who may run them (the server and the CLI do).
// docs/planner.md describes the rules for users.
//
// It is pure, like package schema: no I/O, and a plan depends only on its
// inputs. What the desired schema lacks is kept unless Options says to drop
// it (Prune, DropColumns); what cannot change in place is refused with an
// *ImpossibleError unless Options.AllowRecreate plans it as DROP and CREATE.
//
//	desired, err := plan.Load(fileText) // err: a *plan.LoadError
//	if err != nil {
//		return err
//	}
//	p, err := plan.Diff(current, desired, plan.Options{Prune: true})
//	if err != nil {
//		return err // an *ImpossibleError lists what cannot change in place
//	}
//	for _, st := range p.Statements {
//		fmt.Println(st.CQL + ";") // in order; p.Warnings say what it loses
//	}
package plan
