package main

import (
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestNoBacktickInFlagUsage: pflag shows a backticked word of a flag's
// usage as the flag's value placeholder (--join metalog cluster add), so
// no usage may hold one.
func TestNoBacktickInFlagUsage(t *testing.T) {
	flags := 0
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		check := func(f *pflag.Flag) {
			flags++
			if strings.Contains(f.Usage, "`") {
				t.Errorf("%s --%s: usage %q has a backtick, which --help shows as the value's placeholder", cmd.CommandPath(), f.Name, f.Usage)
			}
		}
		cmd.LocalFlags().VisitAll(check)
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	if flags < 100 {
		t.Fatalf("only %d flags seen: the walk missed commands", flags)
	}
}

// TestRepairHelpSaysWhatTheREADMESays: what readers see while a repair
// runs, and what to do when it cannot help, as the README's "Monitoring
// metalog" says it.
func TestRepairHelpSaysWhatTheREADMESays(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	oneLine := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	long := oneLine(newClusterRepairCmd().Long)
	for _, want := range []string{
		"reads on that member keep answering from the metadata of before",
		"the rebuilt state is published once, when the replay is done",
		"its own newest snapshot already held the divergence",
		"FailedPrecondition",
		"delete its data dir, add it again and start it with",
		"it is rebuilt from the leader's snapshot",
	} {
		if !strings.Contains(long, want) {
			t.Errorf("cluster repair --help lacks %q:\n%s", want, long)
		}
		if !strings.Contains(oneLine(string(readme)), want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	if strings.Contains(long, "partial") {
		t.Errorf("cluster repair --help says readers may see a partial schema:\n%s", long)
	}
}
