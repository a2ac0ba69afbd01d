package spell

import "testing"

func TestClosest(t *testing.T) {
	known := []string{"data_dir", "name", "grpc_addr", "http_addr", "min_epoch", "tables_warn_threshold", "tables_fail_threshold"}
	for _, tc := range []struct{ name, want string }{
		{"dta_dir", "data_dir"},                            // a deletion
		{"data_dirr", "data_dir"},                          // an insertion
		{"min_epch", "min_epoch"},                          // the typo of the issue
		{"tables_wanr_threshold", "tables_warn_threshold"}, // a swap is one edit
		{"htpp_addr", "http_addr"},
		{"nmae", "name"},
		{"name", "name"},
		{"x", ""},               // nothing within one edit
		{"tables", ""},          // a prefix is not a misspelling
		{"request_timeout", ""}, // too far
		{"", ""},
	} {
		if got := Closest(tc.name, known); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"abc", "ca", 3},
	} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := distance(tc.b, tc.a); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
}
