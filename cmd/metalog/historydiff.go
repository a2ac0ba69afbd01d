package main

import (
	"io"
	"strings"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/safetext"
)

// maxDiffLines bounds the texts diffLines compares line by line (its cost
// is their product); longer ones are shown as a before block and an after
// block.
const maxDiffLines = 2000

// printHistoryDiff prints one event of history --diff: the block
// printHistoryEvent prints, then what the change did to the object's
// DESCRIBE text (the event's before and after), as a unified diff with
// every line shown, indented by four spaces like the statement:
//
//	--- before
//	+++ after
//	 CREATE TABLE shop.orders (
//	     id uuid PRIMARY KEY,
//	-    total decimal
//	+    total decimal,
//	+    note text
//	 ) WITH ...
//
// A create has no before and a drop no after (every line is then + or -).
// Each line is escaped (safetext.Block), so that stored text cannot act on
// the terminal or start a line of its own.
func printHistoryDiff(w io.Writer, ev *pb.Event) error {
	if err := printHistoryEvent(w, ev); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("    --- before\n    +++ after\n")
	if ev.Before == ev.After {
		b.WriteString("     (no change to the object's text)\n")
	}
	for _, l := range diffLines(splitLines(ev.Before), splitLines(ev.After)) {
		b.WriteString("    ")
		b.WriteString(safetext.Block(l))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// splitLines returns the lines of s without their ends; none for "".
func splitLines(s string) []string {
	var out []string
	for line := range strings.Lines(s) {
		out = append(out, strings.TrimRight(line, "\r\n"))
	}
	return out
}

// diffLines returns the lines of a unified diff from a to b with full
// context: " " before a line both have, "-" before a line only a has, "+"
// before one only b has, in order, the removals of a place before its
// additions. It keeps the longest common subsequence of lines; texts
// longer than maxDiffLines come out as all of a removed, then all of b
// added.
func diffLines(a, b []string) []string {
	if len(a) > maxDiffLines || len(b) > maxDiffLines {
		return append(prefixed("-", a), prefixed("+", b)...)
	}
	// common[i][j] is the length of the longest common subsequence of
	// a[i:] and b[j:].
	common := make([][]int, len(a)+1)
	for i := range common {
		common[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				common[i][j] = common[i+1][j+1] + 1
			} else {
				common[i][j] = max(common[i+1][j], common[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out = append(out, " "+a[i])
			i, j = i+1, j+1
		case j == len(b) || i < len(a) && common[i+1][j] >= common[i][j+1]:
			out = append(out, "-"+a[i])
			i++
		default:
			out = append(out, "+"+b[j])
			j++
		}
	}
	return out
}

// prefixed returns each line after p.
func prefixed(p string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p + l
	}
	return out
}
