// Package buildinfo says which build of metalog is running: the module
// version, the commit it was built from and the Go toolchain, read from
// the information the Go linker records in every binary
// (runtime/debug.ReadBuildInfo). `metalog version` prints it, `metalog
// bench` reports it with its figures, and /metrics serves it as the
// metalog_build_info gauge; one reading for the three.
//
//	fmt.Println("metalog", buildinfo.Read())
//	// metalog devel (commit 78fba4e5c0d1...-dirty, go1.26.8)
//
// It owns that reading only, and stamps nothing: a build gets its version
// and commit from the go command (its -buildvcs setting, a module tag).
package buildinfo
