package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	pb "github.com/metalog/metalog/api/metalogpb"
)

func TestPrintPlanIsCQLWithComments(t *testing.T) {
	var b bytes.Buffer
	printPlan(&b, &pb.PlanResponse{Epoch: 7, Statements: []string{"DROP TABLE shop.old", "ALTER TABLE shop.t ADD v text"},
		Warnings: []string{"DROP TABLE shop.old drops its data"}, Destructive: true, Digest: "ab12"})
	want := "-- plan at epoch 7: 2 statement(s), DESTRUCTIVE; the schema it makes has digest ab12\n" +
		"-- warning: DROP TABLE shop.old drops its data\n" +
		"DROP TABLE shop.old;\nALTER TABLE shop.t ADD v text;\n"
	if b.String() != want {
		t.Errorf("printPlan:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	printPlan(&b, &pb.PlanResponse{Epoch: 3})
	if b.String() != "-- the schema at epoch 3 already matches: nothing to do\n" {
		t.Errorf("empty plan: %q", b.String())
	}
}

func TestConfirmAppliesOnlyOnYes(t *testing.T) {
	for _, tc := range []struct {
		input, err string
	}{
		{"y\n", ""},
		{"YES\n", ""},
		{"n\n", "not applied"},
		{"\n", "not applied"},
		{"", "not applied: no answer on standard input (pass --yes to apply without asking)"},
	} {
		cmd := &cobra.Command{}
		var stderr bytes.Buffer
		cmd.SetIn(strings.NewReader(tc.input))
		cmd.SetErr(&stderr)
		err := confirm(cmd, "apply? ")
		if got := errText(err); got != tc.err || stderr.String() != "apply? " {
			t.Errorf("answer %q: %q (asked %q), want %q", tc.input, got, stderr.String(), tc.err)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
