package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/safetext"
)

func newClusterCheckCmd() *cobra.Command {
	var cf clientFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check in one round that every member has the same schema and sees the same cluster; exits 1 when they disagree",
		Long: `Ask every endpoint given (not only the first that answers) for the agreement
check: each asks every member of its cluster, in one round, for its epoch,
schema digest and recent digest history, its cluster id, the members its
configuration lists and the leader it knows. The members agree when every
reachable member has the reference member's schema (or is only behind it),
answers for the same cluster, lists the same members with the same roles,
and only one says it leads. Endpoints that belong to different clusters, or
whose member lists differ, disagree too; endpoints that do not answer are
noted, and the verdict is of the others. It exits 1 when anything
disagrees, saying why. --json prints one JSON object: agreement, reason,
note, and each endpoint's answer (or error).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			answers, err := checkEndpoints(cmd, &cf)
			if err != nil {
				return err
			}
			v := judgeAnswers(answers)
			if asJSON {
				err = printCheckJSON(cmd.OutOrStdout(), v, answers)
			} else {
				err = printCheck(cmd.OutOrStdout(), v, answers)
			}
			if err != nil {
				return err
			}
			if !v.agreement {
				return errors.New(cmp.Or(v.reason, "the members do not agree"))
			}
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

// checkAnswer is one endpoint's answer to the agreement check.
type checkAnswer struct {
	endpoint string
	resp     *pb.CheckClusterResponse
	err      error
}

// checkEndpoints asks every endpoint of cf, each through a client of its
// own and all at once, for the agreement check. It fails only when none
// answers (with the first one's error).
func checkEndpoints(cmd *cobra.Command, cf *clientFlags) ([]checkAnswer, error) {
	var eps []string
	for _, ep := range strings.Split(cf.endpoints, ",") {
		if ep = strings.TrimSpace(ep); ep != "" && !slices.Contains(eps, ep) {
			eps = append(eps, ep)
		}
	}
	if len(eps) == 0 {
		return nil, errors.New("--endpoints: no endpoint given")
	}
	answers := make([]checkAnswer, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		one := *cf
		one.endpoints = ep
		wg.Go(func() {
			resp, err := unary(cmd, &one, func(ctx context.Context, c *client.Client) (*pb.CheckClusterResponse, error) {
				return c.CheckCluster(ctx, &pb.CheckClusterRequest{})
			})
			answers[i] = checkAnswer{endpoint: ep, resp: resp, err: err}
		})
	}
	wg.Wait()
	for _, a := range answers {
		if a.err == nil {
			return answers, nil
		}
	}
	if len(answers) == 1 {
		return nil, answers[0].err
	}
	return nil, fmt.Errorf("no endpoint answered; %s: %w", answers[0].endpoint, answers[0].err)
}

// checkVerdict is the verdict over every endpoint's answer.
type checkVerdict struct {
	agreement bool
	reason    string
	// note names the endpoints that did not answer: what they would have
	// said is unknown, and agreement is of the others.
	note string
	// groups are the answers to print, one per cluster and member list
	// seen (the first endpoint's of each), with the endpoints that gave it.
	groups []answerGroup
}

// answerGroup is one answer and the endpoints that answered the same.
type answerGroup struct {
	answer    checkAnswer
	endpoints []string
}

// judgeAnswers combines the endpoints' answers: agreement only when the
// endpoints that answered belong to one cluster, list the same members,
// and each answer agrees. Those that did not answer are only noted.
func judgeAnswers(answers []checkAnswer) checkVerdict {
	v := checkVerdict{agreement: true}
	var reasons, failed []string
	clusters := map[string][]string{} // cluster id -> endpoints
	var order []string
	for _, a := range answers {
		if a.err != nil {
			failed = append(failed, fmt.Sprintf("%s (%v)", a.endpoint, a.err))
			continue
		}
		id := cmp.Or(a.resp.ClusterId, "(no id)")
		if _, seen := clusters[id]; !seen {
			order = append(order, id)
		}
		clusters[id] = append(clusters[id], a.endpoint)
		v.addAnswer(a)
		if !a.resp.Agreement && !slices.Contains(reasons, a.resp.Reason) {
			reasons = append(reasons, cmp.Or(a.resp.Reason, "the members do not agree"))
		}
	}
	if len(order) > 1 {
		parts := make([]string, len(order))
		for i, id := range order {
			parts[i] = fmt.Sprintf("%s (%s)", id, strings.Join(clusters[id], ", "))
		}
		reasons = append([]string{fmt.Sprintf("the endpoints belong to %d clusters: %s", len(order), joinAnd(parts))}, reasons...)
	} else if len(v.groups) > 1 {
		parts := make([]string, len(v.groups))
		for i, group := range v.groups {
			parts[i] = fmt.Sprintf("%s through %s", memberNames(group.answer.resp), strings.Join(group.endpoints, ", "))
		}
		reasons = append([]string{"the endpoints list different members: " + joinAnd(parts)}, reasons...)
	}
	if len(failed) > 0 {
		v.note = "no answer from " + strings.Join(failed, ", ")
	}
	v.agreement, v.reason = len(reasons) == 0, strings.Join(reasons, "; ")
	return v
}

// addAnswer adds answer a to the group of the same cluster and member list,
// or as a new group.
func (v *checkVerdict) addAnswer(a checkAnswer) {
	for i, group := range v.groups {
		if group.answer.resp.ClusterId == a.resp.ClusterId && memberNames(group.answer.resp) == memberNames(a.resp) {
			v.groups[i].endpoints = append(v.groups[i].endpoints, a.endpoint)
			return
		}
	}
	v.groups = append(v.groups, answerGroup{answer: a, endpoints: []string{a.endpoint}})
}

// memberNames lists the members an answer checked: "n1, n2, n3".
func memberNames(resp *pb.CheckClusterResponse) string {
	names := make([]string, len(resp.Members))
	for i, m := range resp.Members {
		names[i] = m.Name
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// joinAnd joins parts with commas and a final "and".
func joinAnd(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// printCheck prints the verdict, its reason, and a table per group (headed
// by its cluster and endpoints when there is more than one).
func printCheck(w io.Writer, v checkVerdict, answers []checkAnswer) error {
	verdict := "yes"
	if !v.agreement {
		verdict = "NO"
	}
	first := v.groups[0].answer.resp
	var rpcs uint32
	for _, a := range answers {
		if a.err == nil {
			rpcs += a.resp.Rpcs
		}
	}
	through := ""
	if len(answers) > 1 {
		through = fmt.Sprintf(" through %d endpoints", len(answers))
	}
	fmt.Fprintf(w, "agreement: %s (reference %s, %d status calls%s)\n", verdict, first.Reference, rpcs, through)
	if v.reason != "" {
		fmt.Fprintf(w, "reason: %s\n", safetext.Line(v.reason))
	}
	if v.note != "" {
		fmt.Fprintf(w, "note: %s\n", safetext.Line(v.note))
	}
	for _, group := range v.groups {
		resp := group.answer.resp
		if len(v.groups) > 1 {
			fmt.Fprintf(w, "\ncluster %s through %s (reference %s):\n", cmp.Or(resp.ClusterId, "(no id)"), strings.Join(group.endpoints, ", "), resp.Reference)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tEPOCH\tAPPLIED\tDIGEST\tSTATE\tDETAIL")
		for _, m := range resp.Members {
			digest := m.Digest
			if len(digest) > 12 {
				digest = digest[:12]
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", safetext.Line(m.Name), m.Epoch, m.AppliedIndex, safetext.Line(digest), safetext.Line(m.State), safetext.Line(m.Detail))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// printCheckJSON prints the verdict as one JSON object: agreement,
// reason, and each endpoint's answer (the CheckClusterResponse, field
// names as in the HTTP API) or error.
func printCheckJSON(w io.Writer, v checkVerdict, answers []checkAnswer) error {
	type endpointAnswer struct {
		Endpoint string          `json:"endpoint"`
		Check    json.RawMessage `json:"check,omitempty"`
		Error    string          `json:"error,omitempty"`
	}
	out := struct {
		Agreement bool             `json:"agreement"`
		Reason    string           `json:"reason"`
		Note      string           `json:"note,omitempty"`
		Endpoints []endpointAnswer `json:"endpoints"`
	}{Agreement: v.agreement, Reason: v.reason, Note: v.note}
	for _, a := range answers {
		ea := endpointAnswer{Endpoint: a.endpoint}
		if a.err != nil {
			ea.Error = a.err.Error()
		} else {
			b, err := jsonOptions.Marshal(a.resp)
			if err != nil {
				return err
			}
			ea.Check = b
		}
		out.Endpoints = append(out.Endpoints, ea)
	}
	return json.NewEncoder(w).Encode(out)
}
