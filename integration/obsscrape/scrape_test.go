//go:build obs

package obsscrape

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/metrics"
)

func TestMain(m *testing.M) {
	if os.Getenv("OBSSCRAPE_CHILD") == "go" {
		if err := goChild(); err != nil {
			fmt.Fprintln(os.Stderr, "go child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const root = "../.."

// child is one language's process serving /metrics.
type child struct {
	name  string
	port  string
	stdin io.WriteCloser
	// stderr is the file the child logs to: complete once it printed its
	// port, since every runtime writes its log lines unbuffered.
	stderr string
}

// start runs cmd, waits for its "port N" line and stops it at cleanup.
func start(t *testing.T, name string, cmd *exec.Cmd) *child {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errPath := filepath.Join(t.TempDir(), name+".log")
	errFile, err := os.Create(errPath)
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	cmd.Stderr = errFile
	stderr := func() string { b, _ := os.ReadFile(errPath); return string(b) }
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", name, stderr())
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "port "); ok {
				lines <- p
			}
		}
		close(lines)
	}()
	select {
	case p, ok := <-lines:
		if !ok {
			_ = cmd.Wait()
			t.Fatalf("%s exited without serving metrics:\n%s", name, stderr())
		}
		return &child{name: name, port: p, stdin: stdin, stderr: errPath}
	case <-time.After(3 * time.Minute):
		t.Fatalf("%s: no metrics port after 3 minutes:\n%s", name, stderr())
	}
	return nil
}

func need(t *testing.T, path, hint string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s is missing: %s", path, hint)
	}
}

func javaClasspath(t *testing.T) string {
	t.Helper()
	need(t, filepath.Join(root, "runtime-java/core/target/classes/io/msgcontract/observe/PrometheusMetrics.class"),
		"make runtime-java builds it")
	cpFile := filepath.Join(t.TempDir(), "cp.txt")
	out, err := exec.Command("mvn", "-B", "-q", "-f", filepath.Join(root, "runtime-java/core/pom.xml"),
		"dependency:build-classpath", "-Dmdep.includeScope=test", "-Dmdep.outputFile="+cpFile).CombinedOutput()
	if err != nil {
		t.Fatalf("mvn dependency:build-classpath: %v\n%s", err, out)
	}
	cp, err := os.ReadFile(cpFile)
	if err != nil {
		t.Fatal(err)
	}
	classes, err := filepath.Abs(filepath.Join(root, "runtime-java/core/target/classes"))
	if err != nil {
		t.Fatal(err)
	}
	return classes + string(os.PathListSeparator) + strings.TrimSpace(string(cp))
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

// promAPI GETs a Prometheus API path and decodes its data.
func promAPI(base, path string, q url.Values, data any) error {
	resp, err := http.Get(base + path + "?" + q.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return err
	}
	if r.Status != "success" {
		return fmt.Errorf("%s: %s", path, r.Error)
	}
	return json.Unmarshal(r.Data, data)
}

type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// Prometheus scrapes a Go, a Java and a Python process that ran the same
// messages; every language exposes the same series names, labels and
// counts of docs/DESIGN.md's vocabulary.
func TestSameSeriesFromEveryLanguage(t *testing.T) {
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus is not on PATH: scripts/setup.sh installs Debian's prometheus package")
	}
	python := filepath.Join(root, ".venv/bin/python")
	need(t, python, "make runtime-python creates it with msgcontract-runtime and prometheus-client")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	goCmd := exec.CommandContext(ctx, self, "-test.run=^$")
	goCmd.Env = append(os.Environ(), "OBSSCRAPE_CHILD=go")
	javaCmd := exec.CommandContext(ctx, "java", "-cp", javaClasspath(t), "testdata/ObsMain.java")
	pyCmd := exec.CommandContext(ctx, python, "testdata/obs_python.py")
	children := []*child{start(t, "go", goCmd), start(t, "java", javaCmd), start(t, "python", pyCmd)}

	var cfg strings.Builder
	cfg.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n")
	for _, c := range children {
		fmt.Fprintf(&cfg, "  - job_name: %s\n    static_configs:\n      - targets: ['127.0.0.1:%s']\n", c.name, c.port)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + freePort(t)
	prom := exec.CommandContext(ctx, promBin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr, "--log.level=warn")
	var promLog strings.Builder
	prom.Stdout, prom.Stderr = &promLog, &promLog
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = prom.Process.Signal(os.Interrupt)
		_ = prom.Wait()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", promLog.String())
		}
	})
	base := "http://" + addr

	// Wait until every job's counters are in: 4 outcome series each.
	query := func(q string) ([]sample, error) {
		var d struct {
			Result []sample `json:"result"`
		}
		err := promAPI(base, "/api/v1/query", url.Values{"query": {q}}, &d)
		return d.Result, err
	}
	var lastErr error
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		res, err := query(`count by (job) (` + metrics.NameProcessed + `)`)
		if err == nil && len(res) == 3 && res[0].Value[1] == "4" && res[1].Value[1] == "4" && res[2].Value[1] == "4" {
			break
		}
		lastErr = fmt.Errorf("%v %v", res, err)
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus did not get every job's counters in 2 minutes: %v", lastErr)
		}
	}

	// Series names and label names per job.
	var series []map[string]string
	if err := promAPI(base, "/api/v1/series", url.Values{"match[]": {`{__name__=~"msgcontract_.+"}`}}, &series); err != nil {
		t.Fatal(err)
	}
	shapes := map[string][]string{} // job -> sorted "name{label names}"
	for _, s := range series {
		var labels []string
		for k := range s {
			if k != "__name__" && k != "job" && k != "instance" {
				labels = append(labels, k)
			}
		}
		slices.Sort(labels)
		shape := s["__name__"] + "{" + strings.Join(labels, ",") + "}"
		if !slices.Contains(shapes[s["job"]], shape) {
			shapes[s["job"]] = append(shapes[s["job"]], shape)
		}
	}
	// The DLQ gauge is the Go runtime's alone (it owns the dead-letter
	// store); the Java and Python consumers hand dead letters to the
	// caller's transport.
	goOnly := metrics.NameDLQMessages + "{group,topic}"
	if !slices.Contains(shapes["go"], goOnly) {
		t.Errorf("go: no %s in %v", goOnly, shapes["go"])
	}
	shapes["go"] = slices.DeleteFunc(shapes["go"], func(s string) bool { return s == goOnly })
	want := []string{
		"msgcontract_end_to_end_latency_seconds_bucket{event_type,handler,le}",
		"msgcontract_end_to_end_latency_seconds_count{event_type,handler}",
		"msgcontract_end_to_end_latency_seconds_sum{event_type,handler}",
		"msgcontract_handler_duration_seconds_bucket{event_type,handler,le}",
		"msgcontract_handler_duration_seconds_count{event_type,handler}",
		"msgcontract_handler_duration_seconds_sum{event_type,handler}",
		"msgcontract_messages_processed_total{event_type,handler,outcome}",
		"msgcontract_messages_processed_total{outcome}", // the envelope that did not decode: handler="" event_type=""
		"msgcontract_retry_delay_seconds_bucket{event_type,handler,le}",
		"msgcontract_retry_delay_seconds_count{event_type,handler}",
		"msgcontract_retry_delay_seconds_sum{event_type,handler}",
	}
	for _, job := range []string{"go", "java", "python"} {
		slices.Sort(shapes[job])
		if !slices.Equal(shapes[job], want) {
			t.Errorf("%s series:\n  %s\nwant\n  %s", job, strings.Join(shapes[job], "\n  "), strings.Join(want, "\n  "))
		}
	}

	// The same counts per outcome, and the same buckets (so sum by (le)
	// aggregates across languages).
	perJob := func(q string, key func(sample) string) map[string][]string {
		res, err := query(q)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string][]string{}
		for _, s := range res {
			m[s.Metric["job"]] = append(m[s.Metric["job"]], key(s))
		}
		for _, v := range m {
			slices.Sort(v)
		}
		return m
	}
	counts := perJob(metrics.NameProcessed, func(s sample) string {
		return fmt.Sprintf("%s/%s/%s=%v", s.Metric["handler"], s.Metric["event_type"], s.Metric["outcome"], s.Value[1])
	})
	wantCounts := []string{"//dead_lettered=1", "obs/OBS_EVENT/deduplicated=1", "obs/OBS_EVENT/handled=2", "obs/OBS_EVENT/retry_scheduled=1"}
	for _, job := range []string{"go", "java", "python"} {
		if !slices.Equal(counts[job], wantCounts) {
			t.Errorf("%s counts = %v, want %v", job, counts[job], wantCounts)
		}
	}
	for _, h := range []string{metrics.NameHandlerDuration, metrics.NameRetryDelay, metrics.NameEndToEnd} {
		les := perJob(h+"_bucket", func(s sample) string { return s.Metric["le"] })
		for _, job := range []string{"java", "python"} {
			if !slices.Equal(les[job], les["go"]) {
				t.Errorf("%s_bucket le values: %s %v, go %v", h, job, les[job], les["go"])
			}
		}
	}
	res, err := query(`sum by (job) (` + metrics.NameRetryDelay + `_count)`)
	if err != nil || len(res) != 3 {
		t.Fatalf("retry delay counts: %v %v", res, err)
	}
	for _, s := range res {
		if s.Value[1] != "1" {
			t.Errorf("%s: %v retry delays observed, want 1", s.Metric["job"], s.Value[1])
		}
	}
	// One end-to-end observation per handled delivery (a, and b's retry),
	// b's at least its 1 s backoff after it occurred: a retry keeps
	// occurred_at.
	e2e := perJob(`{__name__=~"`+metrics.NameEndToEnd+`_(count|sum)"}`, func(s sample) string {
		if strings.HasSuffix(s.Metric["__name__"], "_count") {
			return fmt.Sprint("count=", s.Value[1])
		}
		sum, _ := strconv.ParseFloat(fmt.Sprint(s.Value[1]), 64)
		return fmt.Sprint("sum>=1s=", sum >= 1)
	})
	for _, job := range []string{"go", "java", "python"} {
		if want := []string{"count=2", "sum>=1s=true"}; !slices.Equal(e2e[job], want) {
			t.Errorf("%s end-to-end latency: %v, want %v", job, e2e[job], want)
		}
	}
	dlq, err := query(metrics.NameDLQMessages)
	if err != nil || len(dlq) != 1 || dlq[0].Value[1] != "1" {
		t.Errorf("go DLQ gauge: %v %v, want one series at 1", dlq, err)
	}

	// The JSON log lines of the retry and of the dead letter carry the
	// same fields with the same values in every language.
	for _, c := range children {
		checkLogLines(t, c)
	}
}

// checkLogLines finds c's JSON log lines for the retry and the dead letter
// and checks the shared fields of docs/DESIGN.md.
func checkLogLines(t *testing.T, c *child) {
	t.Helper()
	b, err := os.ReadFile(c.stderr)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]map[string]any{}
	for _, line := range strings.Split(string(b), "\n") {
		var f map[string]any
		if json.Unmarshal([]byte(line), &f) != nil {
			continue
		}
		if o, _ := f["outcome"].(string); o == "retry_scheduled" || o == "dead_lettered" {
			found[o] = f
		}
	}
	want := map[string]map[string]any{
		"retry_scheduled": {"handler": "obs", "topic": "obs", "biz_key": "range:b", "event_type": "OBS_EVENT",
			"retry_count": 0.0, "code": 50301.0, "delay_seconds": 1.0, "error": "code 50301: ledger down",
			"trace_id": traceparent[3:35], "span_id": traceparent[36:52]},
		"dead_lettered": {"topic": "obs", "reason": "decode", "code": -3.0},
	}
	for outcome, fields := range want {
		f := found[outcome]
		if f == nil {
			t.Errorf("%s: no JSON log line with outcome %s in\n%s", c.name, outcome, b)
			continue
		}
		for k, v := range fields {
			if f[k] != v {
				t.Errorf("%s %s log line: %s = %#v, want %#v (line %v)", c.name, outcome, k, f[k], v, f)
			}
		}
		if outcome == "retry_scheduled" {
			if id, _ := f["message_id"].(string); len(id) != 32 {
				t.Errorf("%s %s log line: message_id = %#v", c.name, outcome, f["message_id"])
			}
		}
		if _, ok := f["error"].(string); !ok {
			t.Errorf("%s %s log line has no error field: %v", c.name, outcome, f)
		}
	}
}
