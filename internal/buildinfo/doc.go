// Package buildinfo says which build of metalog is running: the module
// version, the commit and the Go toolchain the Go linker recorded in the
// binary (runtime/debug.ReadBuildInfo).
//
// `metalog version`, `metalog bench` and the metalog_build_info gauge all
// read it here. It stamps nothing: a build gets its version and commit from
// the go command (a module tag, its -buildvcs setting).
//
//	fmt.Println("metalog", buildinfo.Read())
//	// metalog devel (commit 78fba4e5c0d1...-dirty, go1.26.8)
package buildinfo
