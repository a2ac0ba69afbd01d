package integration

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readmeBlock is a fenced block of the README: its info string ("sh", or
// "" for output) and its text.
type readmeBlock struct {
	lang, text string
}

// readmeSection returns the README's "## title" section, up to the next
// "## " heading.
func readmeSection(t *testing.T, title string) string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "\n## "+title+"\n")
	if start < 0 {
		t.Fatalf("the README has no section %q", title)
	}
	section := readme[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+4]
	}
	return section
}

// fencedBlocks returns the fenced blocks of a README text, in order.
func fencedBlocks(text string) []readmeBlock {
	var out []readmeBlock
	var cur *readmeBlock
	for line := range strings.Lines(text) {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &readmeBlock{lang: strings.TrimSpace(strings.TrimPrefix(line, "```"))}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line
		}
	}
	return out
}

// digests matches a schema digest, which the README shows as one run made
// it: table ids, and so digests, may differ from run to run.
var digests = regexp.MustCompile(`\b[0-9a-f]{64}\b`)

// sameOutput reports whether got is the output the README shows, digests
// aside.
func sameOutput(got, shown string) bool {
	return digests.ReplaceAllString(got, "<digest>") == digests.ReplaceAllString(shown, "<digest>")
}

// readmeShell runs README shell blocks as a reader's terminal would, in
// one directory and with the variables earlier blocks set.
type readmeShell struct {
	t        *testing.T
	dir      string
	assigned string // the VAR=value lines of the blocks run so far
}

// run runs block with bash -e (as a CI step runs) and returns its
// standard output, standard error and exit code.
func (sh *readmeShell) run(block string) (stdout, stderr string, code int) {
	sh.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-eo", "pipefail", "-c", sh.assigned+block)
	cmd.Dir = sh.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			sh.t.Fatalf("bash: %v", err)
		}
	}
	for line := range strings.Lines(block) {
		if regexp.MustCompile(`^[A-Z_]+=\S+`).MatchString(line) {
			sh.assigned += strings.Fields(line)[0] + "\n"
		}
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// mustRun runs block, fails unless it exits with code want, and returns
// its standard output.
func (sh *readmeShell) mustRun(want int, block string) string {
	sh.t.Helper()
	out, stderr, rc := sh.run(block)
	if rc != want {
		sh.t.Fatalf("README block exited %d, want %d:\n%s\nstdout:\n%s\nstderr:\n%s", rc, want, block, out, stderr)
	}
	return out
}

// runQuickstart makes the quickstart's two changes on s: its exec (the
// CLI, at s's address) and its curl (the same request over HTTP).
func runQuickstart(t *testing.T, s *server) {
	t.Helper()
	quick := readmeSection(t, "Quickstart")
	exe := regexp.MustCompile(`(?m)^go run \./cmd/metalog exec -e "([^"]+)"$`).FindStringSubmatch(quick)
	curl := regexp.MustCompile(`(?m)^curl -s -X POST localhost:7080/v1/execute -d '([^']+)'$`).FindStringSubmatch(quick)
	if exe == nil || curl == nil {
		t.Fatalf("the quickstart no longer has its exec and curl commands: update this test with it:\n%s", quick)
	}
	s.mustCLI(0, "exec", "-e", exe[1])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", "http://"+s.httpAddr+"/v1/execute", strings.NewReader(curl[1]))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, epoch := s.schemaAt(); resp.StatusCode != http.StatusOK || epoch != 3 {
		t.Fatalf("the quickstart's curl: HTTP %d, epoch %d, want 200 and epoch 3", resp.StatusCode, epoch)
	}
}

// declarativeBlocks returns the shell blocks of the README's Declarative
// schemas section, each with the output block that follows it ("" for
// none), with the quickstart's address replaced by s's and the build of
// the binary by a link to the one the tests built; and the output blocks
// of the section that follow no shell block, in order.
func declarativeBlocks(t *testing.T, s *server) (runs [][2]string, shown []string) {
	t.Helper()
	const build, ep = "go build -o metalog ./cmd/metalog", "EP=127.0.0.1:7070"
	blocks := fencedBlocks(readmeSection(t, "Declarative schemas"))
	for i, b := range blocks {
		switch {
		case b.lang == "sh":
			text := b.text
			if i == 0 {
				if !strings.HasPrefix(text, build+" ") || !strings.Contains(text, "\n"+ep+" ") {
					t.Fatalf("the section's first block no longer begins with %q and sets %q: update this test:\n%s", build, ep, text)
				}
				text = strings.Replace(text, build, "ln -sf "+binary+" metalog", 1)
				text = strings.Replace(text, ep, "EP="+s.grpcAddr, 1)
			}
			out := ""
			if i+1 < len(blocks) && blocks[i+1].lang == "" {
				out = blocks[i+1].text
			}
			runs = append(runs, [2]string{text, out})
		case b.lang == "" && (i == 0 || blocks[i-1].lang != "sh"):
			shown = append(shown, b.text)
		}
	}
	if len(runs) != 5 || len(shown) != 2 {
		t.Fatalf("the section has %d shell blocks and %d output blocks of no command, want 5 and 2: update this test", len(runs), len(shown))
	}
	return runs, shown
}

// TestReadmeDeclarativeSection runs the commands of the README's
// Declarative schemas section as written, after the quickstart's, against
// a real member, and checks that they print what the section shows (the
// quickstart's address is the member's, and ./metalog the binary the
// tests built). Then it runs the CI snippet in the states the section
// describes: nothing to do (exit 0), changes pending (exit 0, and the
// merge applies them), the schema moved between plan and merge (the merge
// exits 1 as shown, nothing applied), and files that do not load (exit
// 1, with the error the section shows). On main's code the section used
// $EP before defining it, clashed with the quickstart's shop.orders, and
// plan took neither a directory nor -o.
func TestReadmeDeclarativeSection(t *testing.T) {
	s := newServer(t)
	s.start()
	runQuickstart(t, s)
	runs, shown := declarativeBlocks(t, s)
	sh := &readmeShell{t: t, dir: t.TempDir()}
	for i, r := range runs {
		out := sh.mustRun(0, r[0])
		if r[1] != "" && !sameOutput(out, r[1]) {
			t.Errorf("README block %d printed:\n%s\nthe README shows:\n%s", i+1, out, r[1])
		}
	}
	prBlock, mergeBlock := runs[3][0], runs[4][0]
	cql, epoch := s.schemaAt()
	if !strings.Contains(cql, "CREATE TABLE shop.orders") || !strings.Contains(cql, "verified boolean") || epoch != 5 {
		t.Fatalf("after the section, at epoch %d:\n%s", epoch, cql)
	}

	// Nothing to do: the snippet says so and exits 0; the merge applies nothing.
	if out := sh.mustRun(0, prBlock); !strings.Contains(out, "nothing to do\n") || !strings.HasSuffix(out, "\nno schema change\n") {
		t.Errorf("the CI snippet with nothing to do:\n%s", out)
	}
	if out := sh.mustRun(0, mergeBlock); !strings.Contains(out, "nothing to do\n") || strings.Contains(out, "applied") {
		t.Errorf("the merge snippet with nothing to do:\n%s", out)
	}

	// Changes pending, then the schema moves before the merge.
	products := filepath.Join(sh.dir, "schema", "products.cql")
	b, err := os.ReadFile(products)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), "price frozen<price>)", "price frozen<price>, stock int)", 1)
	if err := os.WriteFile(products, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := sh.mustRun(0, prBlock); !strings.Contains(out, "ALTER TABLE catalog.products ADD stock int;") || !strings.HasSuffix(out, "\nschema changes pending: review plan.cql\n") {
		t.Errorf("the CI snippet with a change pending:\n%s", out)
	}
	s.mustCLI(0, "exec", "-e", "CREATE TABLE shop.returns (id uuid PRIMARY KEY)")
	before, epoch := s.schemaAt()
	out, stderr, rc := sh.run(mergeBlock)
	if rc != 1 || !sameOutput(stderr, shown[1]) {
		t.Errorf("the merge after the schema moved: exit code %d\nstdout:\n%s\nstderr:\n%s\nthe README shows:\n%s", rc, out, stderr, shown[1])
	}
	if after, epochAfter := s.schemaAt(); epochAfter != epoch || after != before {
		t.Errorf("a refused plan file changed the schema: epoch %d -> %d", epoch, epochAfter)
	}

	// Files that do not load: exit 1 with the error the section shows.
	catalog := filepath.Join(sh.dir, "schema", "catalog.cql")
	f, err := os.OpenFile(catalog, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("CREATE TABLE catalog.products (sku text PRIMARY KEY);\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, stderr, rc = sh.run(prBlock)
	if rc != 1 || !sameOutput(stderr, shown[0]) || strings.Contains(out, "schema change") {
		t.Errorf("the CI snippet with a table defined twice: exit code %d\nstdout:\n%s\nstderr:\n%s\nthe README shows:\n%s", rc, out, stderr, shown[0])
	}
}
