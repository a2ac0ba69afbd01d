// Package spell finds the known name closest to a misspelt one, for the "did
// you mean" of errors about names given by users: config keys, guardrail
// settings, HTTP query parameters.
//
// It owns the notion of "close" only: what to say about it is the caller's.
//
//	spell.Closest("dta_dir", []string{"data_dir", "name"}) // "data_dir"
//	spell.Closest("zzz", []string{"data_dir", "name"})     // "": nothing close
package spell
