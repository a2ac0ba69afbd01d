//go:build !metalog_brokenreads

package member

// brokenLinearizableReads is false in every build but the deliberately
// broken one of brokenreads.go: Linearizable reads confirm with ReadIndex.
const brokenLinearizableReads = false
