package spell

// Closest returns the name of known nearest to name, or "" when none is
// close enough to be a likely misspelling: at most one edit (an inserted,
// deleted or replaced character, or two adjacent characters swapped) per
// three characters of name, and at least one. Ties go to the first in
// known. It compares bytes, case-sensitively.
func Closest(name string, known []string) string {
	best, bestDist := "", max(1, len(name)/3)+1
	for _, k := range known {
		if d := distance(name, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// distance is the optimal string alignment distance of a and b: the edits
// of Closest, each substring edited at most once.
func distance(a, b string) int {
	// Three rows of the dynamic programming table: two back, one back and
	// the current one.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
