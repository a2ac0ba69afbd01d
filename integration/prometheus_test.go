package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// The monitoring assets these tests check, relative to this package.
const (
	dashboardFile   = "../deploy/grafana/metalog.json"
	alertsFile      = "../deploy/prometheus/alerts.yml"
	metricsDocsFile = "../docs/metrics.md"
)

// requiredAlerts are the alerts deploy/prometheus/alerts.yml must define.
var requiredAlerts = []string{"MetalogNoLeader", "MetalogSnapshotStoreFailure", "MetalogEpochLagging",
	"MetalogGuardrailFailures", "MetalogSchemaFlushFailures", "MetalogDegraded", "MetalogRequestsRefused", "MetalogStoreCorruption"}

// healthAlerts must not match anything in a healthy cluster after a DDL
// workload that has converged.
var healthAlerts = []string{"MetalogMemberDown", "MetalogNoLeader", "MetalogEpochLagging",
	"MetalogDegraded", "MetalogSnapshotStoreFailure", "MetalogSchemaFlushFailures", "MetalogHistoryIncomplete", "MetalogRequestsRefused", "MetalogStoreCorruption"}

// lookTool returns the path of a Prometheus tool, or skips the test.
// requireToolsEnv, when set (CI sets it once .ci/install-prometheus has the
// tools), turns a missing tool into a failure instead of a skip, so that
// the monitoring tests cannot pass by not running.
const requireToolsEnv = "METALOG_REQUIRE_PROMETHEUS"

func lookTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if fail, msg := missingTool(name, err, os.Getenv(requireToolsEnv) != ""); fail {
			t.Fatal(msg)
		} else {
			t.Skip(msg)
		}
	}
	return path
}

// missingTool says what a test does about a tool it cannot find: fail when
// the tools are required, skip otherwise, and why.
func missingTool(name string, err error, required bool) (fail bool, msg string) {
	if required {
		return true, fmt.Sprintf("%s is not on PATH, but %s is set (.ci/install-prometheus installed the tools): %v", name, requireToolsEnv, err)
	}
	return false, fmt.Sprintf("%s is not on PATH (install it with .ci/install-prometheus or apt-get install prometheus): %v", name, err)
}

// TestMissingToolFailsWhenRequired: in CI, with the tools installed, a
// monitoring test that cannot find one fails instead of skipping.
func TestMissingToolFailsWhenRequired(t *testing.T) {
	err := errors.New("not found")
	if fail, msg := missingTool("promtool", err, true); !fail || !strings.Contains(msg, requireToolsEnv) {
		t.Errorf("required: fail=%v %q", fail, msg)
	}
	if fail, msg := missingTool("promtool", err, false); fail || !strings.Contains(msg, "install-prometheus") {
		t.Errorf("not required: fail=%v %q", fail, msg)
	}
}

// runTool runs a tool with stdin, bounded in time, and returns its combined
// output and exit code.
func runTool(t *testing.T, stdin io.Reader, name string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = stdin
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
		}
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// documentedMetric is one row of a table in docs/metrics.md.
type documentedMetric struct {
	name, typ string
}

var docRow = regexp.MustCompile("^\\| `(metalog_[a-z0-9_]+)` \\| (counter|gauge|histogram) \\|")

// documentedMetrics returns the metrics of docs/metrics.md's tables by name.
func documentedMetrics(t *testing.T) map[string]documentedMetric {
	t.Helper()
	b, err := os.ReadFile(metricsDocsFile)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]documentedMetric{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if m := docRow.FindStringSubmatch(sc.Text()); m != nil {
			docs[m[1]] = documentedMetric{name: m[1], typ: m[2]}
		}
	}
	if len(docs) < 30 {
		t.Fatalf("%s documents only %d metrics in its tables", metricsDocsFile, len(docs))
	}
	return docs
}

// seriesNames returns the names of the series a metric exports: the name,
// or for a histogram its _bucket, _sum and _count series.
func (m documentedMetric) seriesNames() []string {
	if m.typ == "histogram" {
		return []string{m.name + "_bucket", m.name + "_sum", m.name + "_count"}
	}
	return []string{m.name}
}

var exprMetric = regexp.MustCompile(`\b(?:metalog|go|process)_[a-zA-Z0-9_]+|\bup\{`)

// referencedSeries returns the series names a PromQL expression uses.
func referencedSeries(expr string) []string {
	var names []string
	for _, n := range exprMetric.FindAllString(expr, -1) {
		n = strings.TrimSuffix(n, "{")
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// undocumented returns the metalog series of expr that docs/metrics.md does
// not describe.
func undocumented(docs map[string]documentedMetric, expr string) []string {
	var bad []string
	for _, n := range referencedSeries(expr) {
		if !strings.HasPrefix(n, "metalog_") {
			continue
		}
		found := false
		for _, m := range docs {
			if slices.Contains(m.seriesNames(), n) {
				found = true
				break
			}
		}
		if !found {
			bad = append(bad, n)
		}
	}
	return bad
}

// panelTarget is one query of a dashboard panel.
type panelTarget struct {
	panel, refID, expr string
}

func (p panelTarget) String() string { return fmt.Sprintf("panel %q target %s", p.panel, p.refID) }

// grafanaDashboard is the part of the dashboard JSON the tests read.
type grafanaDashboard struct {
	SchemaVersion int `json:"schemaVersion"`
	UID           string
	Title         string
	Panels        []grafanaPanel `json:"panels"`
	Templating    struct {
		List []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"list"`
	} `json:"templating"`
}

type grafanaPanel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		Type, UID string
	} `json:"datasource"`
	GridPos struct{ H, W, X, Y int } `json:"gridPos"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"` // of a collapsed row
}

// dashboardTargets checks the dashboard's structure and returns its queries.
func dashboardTargets(t *testing.T) []panelTarget {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.SchemaVersion < 36 || d.UID == "" || d.Title == "" {
		t.Fatalf("%s: schemaVersion %d, uid %q, title %q", dashboardFile, d.SchemaVersion, d.UID, d.Title)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
	}
	if vars["datasource"] != "datasource" || vars["instance"] != "query" {
		t.Fatalf("%s: want a datasource variable and an instance variable, got %v", dashboardFile, vars)
	}
	var all []grafanaPanel
	for _, p := range d.Panels {
		all = append(all, p)
		all = append(all, p.Panels...)
	}
	ids := map[int]bool{}
	var targets []panelTarget
	rows := 0
	for _, p := range all {
		if ids[p.ID] {
			t.Errorf("%s: panel id %d used twice", dashboardFile, p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			rows++
			continue
		}
		if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("%s: panel %q: bad gridPos %+v", dashboardFile, p.Title, p.GridPos)
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("%s: panel %q does not use the ${datasource} variable", dashboardFile, p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: panel %q has no query", dashboardFile, p.Title)
		}
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("%s: panel %q target %s has no expr", dashboardFile, p.Title, tg.RefID)
			}
			targets = append(targets, panelTarget{panel: p.Title, refID: tg.RefID, expr: tg.Expr})
		}
	}
	if rows < 7 || len(targets) < 30 {
		t.Fatalf("%s: %d rows and %d queries, want the sections of deploy/README.md", dashboardFile, rows, len(targets))
	}
	return targets
}

var grafanaVar = regexp.MustCompile(`\$\{([a-zA-Z_]+)(?::[a-z]+)?\}|\$([a-zA-Z_]+)|\[\[([a-zA-Z_]+)\]\]`)

// expandGrafana replaces the dashboard's variables with the values a
// Grafana showing all members of job "metalog" would send.
func expandGrafana(t *testing.T, expr string) string {
	t.Helper()
	values := map[string]string{
		"__rate_interval": "1m", "__interval": "15s", "__range": "5m",
		"job": "metalog", "instance": ".*",
	}
	return grafanaVar.ReplaceAllStringFunc(expr, func(v string) string {
		m := grafanaVar.FindStringSubmatch(v)
		name := m[1] + m[2] + m[3]
		val, ok := values[name]
		if !ok {
			t.Fatalf("expression %q uses unknown Grafana variable %s", expr, v)
		}
		return val
	})
}

// alertRule is one rule of alerts.yml.
type alertRule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record,omitempty"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

type ruleGroup struct {
	Name  string      `yaml:"name"`
	Rules []alertRule `yaml:"rules"`
}

type ruleFile struct {
	Groups []ruleGroup `yaml:"groups"`
}

// alertRules reads alerts.yml and checks every rule is a complete alert.
func alertRules(t *testing.T) ruleFile {
	t.Helper()
	b, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var f ruleFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	names := map[string]bool{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				t.Errorf("%s: rule %q is not an alert", alertsFile, r.Expr)
				continue
			}
			names[r.Alert] = true
			d, err := time.ParseDuration(strings.TrimSpace(r.For))
			if err != nil || d <= 0 {
				t.Errorf("%s: %s: want a for: duration, got %q", alertsFile, r.Alert, r.For)
			}
			if sev := r.Labels["severity"]; sev != "critical" && sev != "warning" && sev != "info" {
				t.Errorf("%s: %s: severity %q, want critical, warning or info", alertsFile, r.Alert, sev)
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s: %s: want summary and description annotations", alertsFile, r.Alert)
			}
		}
	}
	for _, a := range requiredAlerts {
		if !names[a] {
			t.Errorf("%s: no alert %s", alertsFile, a)
		}
	}
	return f
}

// TestPrometheusAssetsUseDocumentedMetrics checks that the dashboard and the
// alerts only use metrics docs/metrics.md describes: a misspelt name would
// otherwise show an empty panel or an alert that never fires.
func TestPrometheusAssetsUseDocumentedMetrics(t *testing.T) {
	docs := documentedMetrics(t)
	for _, tg := range dashboardTargets(t) {
		if bad := undocumented(docs, tg.expr); len(bad) > 0 {
			t.Errorf("%s: %v not in %s", tg, bad, metricsDocsFile)
		}
		if !strings.Contains(tg.expr, `job=~"$job"`) {
			t.Errorf("%s: %q does not select job=~\"$job\"", tg, tg.expr)
		}
	}
	for _, g := range alertRules(t).Groups {
		for _, r := range g.Rules {
			if bad := undocumented(docs, r.Expr); len(bad) > 0 {
				t.Errorf("alert %s: %v not in %s", r.Alert, bad, metricsDocsFile)
			}
		}
	}
}

// exposedTypes parses the # TYPE lines of a text exposition.
func exposedTypes(text string) map[string]string {
	types := map[string]string{}
	for line := range strings.Lines(text) {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			types[f[2]] = f[3]
		}
	}
	return types
}

// TestPromtoolCheckMetrics lints one member's /metrics after a little DDL
// (guardrail warning and refusal included, so labelled counters exist) with
// promtool, and compares the metrics with docs/metrics.md.
func TestPromtoolCheckMetrics(t *testing.T) {
	promtool := lookTool(t, "promtool")
	s := newServer(t)
	s.start()
	if out, stderr, rc := s.cli("guardrails", "set", "tables_warn_threshold=1", "tables_fail_threshold=2"); rc != 0 {
		t.Fatalf("guardrails set: rc=%d %s %s", rc, out, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE ks.a (id int PRIMARY KEY)"}); err != nil {
		t.Fatal(err)
	}
	if r, err := s.client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.b (id int PRIMARY KEY)"}); err != nil || len(r.Warnings) == 0 {
		t.Fatalf("second table: want a warning, got %v, %v", r, err)
	}
	if _, err := s.client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.c (id int PRIMARY KEY)"}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("third table: %v, want FailedPrecondition", err)
	}
	if _, err := s.client().GetSchema(ctx, &pb.GetSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	code, body := httpDo(t, "GET", "http://"+s.httpAddr+"/metrics", "")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}

	out, rc := runTool(t, strings.NewReader(body), promtool, "check", "metrics")
	if rc != 0 || strings.TrimSpace(out) != "" {
		t.Errorf("promtool check metrics: exit %d, findings:\n%s", rc, out)
	}

	types := exposedTypes(body)
	docs := documentedMetrics(t)
	var missing []string
	for name, m := range docs {
		got, ok := types[name]
		if !ok {
			missing = append(missing, name)
			continue
		}
		if got != m.typ {
			t.Errorf("%s is a %s on /metrics, %s says %s", name, got, metricsDocsFile, m.typ)
		}
	}
	for name := range types {
		if strings.HasPrefix(name, "metalog_") {
			if _, ok := docs[name]; !ok {
				t.Errorf("%s is served on /metrics but not described in %s", name, metricsDocsFile)
			}
		}
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := types[name]; !ok {
			t.Errorf("no %s on /metrics: Go runtime or process collector missing", name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Logf("documented in %s but not served by this member: %s", metricsDocsFile, strings.Join(missing, " "))
	}
}

// TestPromtoolCheckRules checks alerts.yml with promtool, then unit-tests the
// alert expressions with promtool test rules on synthetic series.
func TestPromtoolCheckRules(t *testing.T) {
	promtool := lookTool(t, "promtool")
	out, rc := runTool(t, nil, promtool, "check", "rules", alertsFile)
	if rc != 0 {
		t.Fatalf("promtool check rules %s: exit %d\n%s", alertsFile, rc, out)
	}
	rules := alertRules(t)

	// promtool test rules compares annotations exactly; the annotations
	// are prose (checked above and by check rules), so the unit tests
	// run the rules without them.
	for gi := range rules.Groups {
		for ri := range rules.Groups[gi].Rules {
			rules.Groups[gi].Rules[ri].Annotations = nil
		}
	}
	dir := t.TempDir()
	b, err := yaml.Marshal(rules)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts.yml"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts_test.yml"), []byte(alertUnitTests), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, rc := runTool(t, nil, promtool, "test", "rules", filepath.Join(dir, "alerts_test.yml")); rc != 0 {
		t.Fatalf("promtool test rules: exit %d\n%s", rc, out)
	}
}

// alertUnitTests is a promtool rule test: n1 loses its leader, lags in
// epochs, fails a snapshot, a flush and a guardrail and degrades, n2 stops
// answering scrapes, n3 stays healthy. Every condition starts at 30-45 s, so
// at 1m the alerts (for: 1m) are still pending and at 3m they fire.
const alertUnitTests = `rule_files:
  - alerts.yml
evaluation_interval: 15s
tests:
  - interval: 15s
    input_series:
      - series: 'up{job="metalog", instance="n1"}'
        values: '1x20'
      - series: 'up{job="metalog", instance="n2"}'
        values: '1 1 0x18'
      - series: 'up{job="metalog", instance="n3"}'
        values: '1x20'
      - series: 'metalog_raft_has_leader{job="metalog", instance="n1"}'
        values: '1 1 0x18'
      - series: 'metalog_raft_has_leader{job="metalog", instance="n3"}'
        values: '1x20'
      - series: 'metalog_epoch{job="metalog", instance="n1"}'
        values: '100+0x20'
      - series: 'metalog_epoch{job="metalog", instance="n3"}'
        values: '100+2x20'
      - series: 'metalog_snapshot_store_failures_total{job="metalog", instance="n1"}'
        values: '0 0 0 1x17'
      - series: 'metalog_snapshot_store_failures_total{job="metalog", instance="n3"}'
        values: '0x20'
      - series: 'metalog_schema_flush_failures_total{job="metalog", instance="n1"}'
        values: '0 0 0 1x17'
      - series: 'metalog_schema_flush_failures_total{job="metalog", instance="n3"}'
        values: '0x20'
      - series: 'metalog_guardrail_failures_total{job="metalog", instance="n1", guardrail="tables_fail_threshold"}'
        values: '0 0 1 2x17'
      - series: 'metalog_guardrail_failures_total{job="metalog", instance="n3", guardrail="tables_fail_threshold"}'
        values: '0x20'
      - series: 'metalog_degraded{job="metalog", instance="n1"}'
        values: '0 0 1x18'
      - series: 'metalog_degraded{job="metalog", instance="n3"}'
        values: '0x20'
      - series: 'metalog_store_corruptions_total{job="metalog", instance="n1"}'
        values: '0 0 0 1x17'
      - series: 'metalog_store_corruptions_total{job="metalog", instance="n3"}'
        values: '0x20'
    alert_rule_test:
      - {eval_time: 1m, alertname: MetalogMemberDown, exp_alerts: []}
      - {eval_time: 1m, alertname: MetalogNoLeader, exp_alerts: []}
      - {eval_time: 1m, alertname: MetalogEpochLagging, exp_alerts: []}
      - {eval_time: 1m, alertname: MetalogSnapshotStoreFailure, exp_alerts: []}
      - {eval_time: 1m, alertname: MetalogSchemaFlushFailures, exp_alerts: []}
      - {eval_time: 1m, alertname: MetalogGuardrailFailures, exp_alerts: []}
      - {eval_time: 1m, alertname: MetalogDegraded, exp_alerts: []}
      - {eval_time: 1m, alertname: MetalogStoreCorruption, exp_alerts: []}
      - eval_time: 3m
        alertname: MetalogMemberDown
        exp_alerts:
          - exp_labels: {severity: warning, job: metalog, instance: n2}
      - eval_time: 3m
        alertname: MetalogNoLeader
        exp_alerts:
          - exp_labels: {severity: critical, job: metalog, instance: n1}
      - eval_time: 3m
        alertname: MetalogEpochLagging
        exp_alerts:
          - exp_labels: {severity: warning, job: metalog, instance: n1}
      - eval_time: 3m
        alertname: MetalogSnapshotStoreFailure
        exp_alerts:
          - exp_labels: {severity: critical, job: metalog, instance: n1}
      - eval_time: 3m
        alertname: MetalogSchemaFlushFailures
        exp_alerts:
          - exp_labels: {severity: critical, job: metalog, instance: n1}
      - eval_time: 3m
        alertname: MetalogGuardrailFailures
        exp_alerts:
          - exp_labels: {severity: warning, job: metalog, instance: n1, guardrail: tables_fail_threshold}
      - eval_time: 3m
        alertname: MetalogDegraded
        exp_alerts:
          - exp_labels: {severity: critical, job: metalog, instance: n1}
      - eval_time: 3m
        alertname: MetalogStoreCorruption
        exp_alerts:
          - exp_labels: {severity: critical, job: metalog, instance: n1}
  # n1 refuses a client over its rate 0.5 times a second and a few
  # malformed requests (invalid: no alert); n3 refuses nothing.
  - interval: 1m
    input_series:
      - series: 'metalog_requests_refused_total{job="metalog", instance="n1", reason="rate_limited"}'
        values: '0+30x20'
      - series: 'metalog_requests_refused_total{job="metalog", instance="n1", reason="invalid"}'
        values: '0+60x20'
      - series: 'metalog_requests_refused_total{job="metalog", instance="n3", reason="rate_limited"}'
        values: '0x20'
    alert_rule_test:
      - {eval_time: 5m, alertname: MetalogRequestsRefused, exp_alerts: []}
      - eval_time: 15m
        alertname: MetalogRequestsRefused
        exp_alerts:
          - exp_labels: {severity: warning, job: metalog, instance: n1, reason: rate_limited}
`

// promServer is a prometheus process started by a test.
type promServer struct {
	t    *testing.T
	addr string
	http *http.Client
}

// startPrometheus runs prometheus with the config in dir, bounded in time
// and killed at cleanup, and waits until it is ready.
func startPrometheus(t *testing.T, bin, dir string) *promServer {
	t.Helper()
	p := &promServer{t: t, addr: freeAddr(t), http: &http.Client{Timeout: 5 * time.Second}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	cmd := exec.CommandContext(ctx, bin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+p.addr,
		"--log.level=warn")
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cancel() // kills the process
		<-exited
		if t.Failed() {
			t.Logf("prometheus log:\n%s", logs.String())
		}
	})
	waitFor(t, 30*time.Second, "prometheus ready", func() error {
		select {
		case <-exited:
			return fmt.Errorf("prometheus exited: %s", logs.String())
		default:
		}
		resp, err := p.http.Get("http://" + p.addr + "/-/ready")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/-/ready: %s", resp.Status)
		}
		return nil
	})
	return p
}

// promAPIResponse is the envelope of the Prometheus HTTP API.
type promAPIResponse struct {
	Status    string          `json:"status"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Data      json.RawMessage `json:"data"`
}

// get calls an API path and returns its data; an error status is an error.
func (p *promServer) get(path string, params url.Values) (json.RawMessage, error) {
	resp, err := p.http.Get("http://" + p.addr + path + "?" + params.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r promAPIResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %s: %v", path, resp.Status, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s: %s: %s", r.ErrorType, r.Error, resp.Status)
	}
	return r.Data, nil
}

// promSample is one element of an instant vector.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// query evaluates expr now. A scalar or string result counts as one sample.
func (p *promServer) query(expr string) ([]promSample, error) {
	data, err := p.get("/api/v1/query", url.Values{"query": {expr}})
	if err != nil {
		return nil, err
	}
	var r struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	if r.ResultType != "vector" {
		return []promSample{{}}, nil
	}
	var v []promSample
	err = json.Unmarshal(r.Result, &v)
	return v, err
}

// mustQuery is query that fails the test on an API error (a parse error).
func (p *promServer) mustQuery(what, expr string) []promSample {
	p.t.Helper()
	v, err := p.query(expr)
	if err != nil {
		p.t.Fatalf("%s: query %q: %v", what, expr, err)
	}
	return v
}

// TestDashboardAndAlertsAgainstRealPrometheus scrapes a 3-member cluster
// with a real Prometheus loaded with alerts.yml, runs DDL (a guardrail
// warning and refusal included), and runs every dashboard query and alert
// expression: each must parse, and each dashboard query whose metrics the
// members export must return data. The alert rules must evaluate without
// error, and the health alerts must match nothing once the cluster has
// converged.
func TestDashboardAndAlertsAgainstRealPrometheus(t *testing.T) {
	bin := lookTool(t, "prometheus")
	targets := dashboardTargets(t)
	rules := alertRules(t)
	docs := documentedMetrics(t)

	c := newCluster(t, 3)
	dir := t.TempDir()
	alerts, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts.yml"), alerts, 0o600); err != nil {
		t.Fatal(err)
	}
	var scrape []string
	for _, s := range c.servers {
		scrape = append(scrape, "'"+s.httpAddr+"'")
	}
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - alerts.yml
scrape_configs:
  - job_name: metalog
    static_configs:
      - targets: [%s]
`, strings.Join(scrape, ", "))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	prom := startPrometheus(t, bin, dir)

	// DDL workload through every member: a keyspace, tables up to the
	// warning threshold and past it, and one refused by the fail threshold.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.servers[0].client().SetGuardrails(ctx, &pb.SetGuardrailsRequest{
		Set: map[string]string{"tables_warn_threshold": "3", "tables_fail_threshold": "6"}}); err != nil {
		t.Fatal(err)
	}
	for i, s := range c.servers {
		waitFor(t, 10*time.Second, "the guardrails on "+c.names[i], func() error {
			if v := guardrailValue(t, s, "tables_fail_threshold"); v != "6" {
				return fmt.Errorf("tables_fail_threshold = %s", v)
			}
			return nil
		})
	}
	if _, err := c.servers[1].client().Execute(ctx, &pb.ExecuteRequest{Statements: ksRF3}); err != nil {
		t.Fatal(err)
	}
	warnings := 0
	for i := 1; i <= 6; i++ {
		s := c.servers[i%len(c.servers)]
		r, err := s.client().Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf("CREATE TABLE ks.t%d (id int PRIMARY KEY, v text)", i)})
		if err != nil {
			t.Fatalf("table %d: %v", i, err)
		}
		warnings += len(r.Warnings)
	}
	if warnings == 0 {
		t.Fatal("no guardrail warning for tables past tables_warn_threshold=3")
	}
	if _, err := c.servers[2].client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.t7 (id int PRIMARY KEY)"}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("table 7: %v, want FailedPrecondition from tables_fail_threshold=6", err)
	}
	_, epoch := c.waitSameDigest()

	// Prometheus has scraped every member after the workload.
	waitFor(t, 30*time.Second, "prometheus to scrape all members up", func() error {
		v, err := prom.query(`up{job="metalog"} == 1`)
		if err != nil {
			return err
		}
		if len(v) != len(c.servers) {
			return fmt.Errorf("%d members up", len(v))
		}
		return nil
	})
	waitFor(t, 30*time.Second, "prometheus to scrape the final epoch", func() error {
		v, err := prom.query(fmt.Sprintf(`metalog_epoch{job="metalog"} == %d`, epoch))
		if err != nil {
			return err
		}
		if len(v) != len(c.servers) {
			return fmt.Errorf("%d members at epoch %d", len(v), epoch)
		}
		return nil
	})

	data, err := prom.get("/api/v1/label/__name__/values", nil)
	if err != nil {
		t.Fatal(err)
	}
	var nameList []string
	if err := json.Unmarshal(data, &nameList); err != nil {
		t.Fatal(err)
	}
	scraped := map[string]bool{}
	for _, n := range nameList {
		scraped[n] = true
	}
	var notScraped []string
	for name, m := range docs {
		for _, s := range m.seriesNames() {
			if !scraped[s] {
				notScraped = append(notScraped, name)
				break
			}
		}
	}
	sort.Strings(notScraped)
	if len(notScraped) > 0 {
		t.Logf("documented but not exported by the members: %s", strings.Join(notScraped, " "))
	}

	// Every dashboard query parses; those over exported metrics return data
	// (rate() needs two scrapes in its window, hence the polling).
	var pending []panelTarget
	for _, tg := range targets {
		expr := expandGrafana(t, tg.expr)
		prom.mustQuery(tg.String(), expr)
		var absent []string
		for _, n := range referencedSeries(expr) {
			if !scraped[n] {
				absent = append(absent, n)
			}
		}
		if len(absent) > 0 {
			t.Logf("%s: not required to return data, the members do not export %v", tg, absent)
			continue
		}
		pending = append(pending, panelTarget{panel: tg.panel, refID: tg.refID, expr: expr})
	}
	checked := len(pending)
	waitFor(t, 60*time.Second, "every dashboard query over exported metrics to return data", func() error {
		var still []panelTarget
		for _, tg := range pending {
			if len(prom.mustQuery(tg.String(), tg.expr)) == 0 {
				still = append(still, tg)
			}
		}
		pending = still
		if len(pending) > 0 {
			var s []string
			for _, tg := range pending {
				s = append(s, fmt.Sprintf("%s: %s", tg, tg.expr))
			}
			return fmt.Errorf("no data for:\n%s", strings.Join(s, "\n"))
		}
		return nil
	})
	t.Logf("%d of %d dashboard queries returned data", checked, len(targets))

	// Every alert expression parses, Prometheus loaded and evaluates every
	// rule without error, and the health alerts match nothing.
	exprs := map[string]string{}
	nrules := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			prom.mustQuery("alert "+r.Alert, r.Expr)
			exprs[r.Alert] = r.Expr
			nrules++
		}
	}
	waitFor(t, 30*time.Second, "prometheus to evaluate every rule", func() error {
		data, err := prom.get("/api/v1/rules", nil)
		if err != nil {
			return err
		}
		var r struct {
			Groups []struct {
				Rules []struct {
					Name, Type, Health string
					LastError          string  `json:"lastError"`
					Duration           float64 `json:"duration"`
				} `json:"rules"`
			} `json:"groups"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			return err
		}
		n := 0
		for _, g := range r.Groups {
			for _, rule := range g.Rules {
				n++
				switch {
				case rule.Health == "err":
					t.Fatalf("rule %s fails to evaluate: %s", rule.Name, rule.LastError)
				case rule.Type != "alerting" || rule.Duration <= 0:
					t.Fatalf("rule %s: type %s, for %vs", rule.Name, rule.Type, rule.Duration)
				case rule.Health != "ok":
					return fmt.Errorf("rule %s health %q", rule.Name, rule.Health)
				}
			}
		}
		if n != nrules {
			return fmt.Errorf("prometheus loaded %d rules, %s has %d", n, alertsFile, nrules)
		}
		return nil
	})
	for _, name := range healthAlerts {
		waitFor(t, 30*time.Second, name+" to match nothing", func() error {
			if v := prom.mustQuery("alert "+name, exprs[name]); len(v) > 0 {
				return fmt.Errorf("%s matches %v", exprs[name], v)
			}
			return nil
		})
	}
}

// TestPresetCountersAreDocumented: the labelled counters a fresh member
// serves before any request (pre-set at 0) are the ones docs/metrics.md
// says are pre-set, and no others.
func TestPresetCountersAreDocumented(t *testing.T) {
	s := newServer(t)
	s.start()
	_, body := httpDo(t, "GET", "http://"+s.httpAddr+"/metrics", "")
	types := exposedTypes(body)
	served := map[string]bool{}
	for line := range strings.Lines(body) {
		if name, _, ok := strings.Cut(line, "{"); ok && strings.HasPrefix(name, "metalog_") && types[name] == "counter" {
			served[name] = true
		}
	}
	doc, err := os.ReadFile(metricsDocsFile)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	_, rest, ok := strings.Cut(text, "Pre-set at 0 from the start")
	para, _, _ := strings.Cut(rest, ".")
	if !ok {
		t.Fatalf("%s does not say which labelled counters are pre-set", metricsDocsFile)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`(metalog_[a-z_]+)`").FindAllStringSubmatch(para, -1) {
		documented[m[1]] = true
	}
	for name := range served {
		if !documented[name] {
			t.Errorf("%s is served at 0 before any event but %s does not list it as pre-set", name, metricsDocsFile)
		}
	}
	for name := range documented {
		if !served[name] {
			t.Errorf("%s lists %s as pre-set, but a fresh member does not serve it", metricsDocsFile, name)
		}
	}
}
