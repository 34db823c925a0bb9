//go:build rabbitmq

package ops

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq/rabbitmqtest"
)

// TestDoctorRabbitMQ runs on the node of scripts/with-rabbitmq.sh (make
// test-rabbitmq), which starts with no plugin: the test enables the
// management plugin on a free loopback port for its own run and disables
// it when it ends, so the node (and a later restart of it) is as it was.
// A classic queue is a finding, a quorum queue is not; a Spring
// properties file without publisher confirms is one.
func TestDoctorRabbitMQ(t *testing.T) {
	t.Parallel()
	conn, err := amqp.Dial(rabbitmqtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	prefix := rabbitmqtest.Prefix()
	classic, quorum := prefix+".classic", prefix+".quorum"
	if _, err := ch.QueueDeclare(classic, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(quorum, true, false, false, false, amqp.Table{"x-queue-type": "quorum"}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, q := range []string{classic, quorum} {
			_, _ = ch.QueueDelete(q, false, false, false)
		}
	}()
	mgmt := enableManagement(t)
	dir := t.TempDir()
	noConfirms, confirms := filepath.Join(dir, "none.properties"), filepath.Join(dir, "correlated.properties")
	for path, text := range map[string]string{noConfirms: "spring.rabbitmq.host=127.0.0.1\n", confirms: "spring.rabbitmq.publisher-confirm-type=correlated\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := []string{"--rabbitmq-management", mgmt, "--rabbitmq-vhost", "/"}
	tests := []struct {
		name   string
		args   []string
		code   int
		want   []string
		stderr string
	}{
		{"classic and quorum", append(m, "--rabbitmq-queue", classic, "--rabbitmq-queue", quorum), cli.ExitFindings,
			[]string{"rabbitmq queue " + classic + " (vhost /): x-queue-type=classic"}, ""},
		{"quorum only, with confirms", append(m, "--rabbitmq-queue", quorum, "--rabbitmq-client-config", confirms), cli.ExitOK, nil, ""},
		{"no publisher confirms", append(m, "--rabbitmq-queue", quorum, "--rabbitmq-client-config", noConfirms), cli.ExitFindings,
			[]string{"rabbitmq-client " + noConfirms + ": spring.rabbitmq.publisher-confirm-type=unset (Spring's default: none)"}, ""},
		{"a queue that does not exist", append(m, "--rabbitmq-queue", quorum, "--rabbitmq-queue", prefix+".missing"), cli.ExitUsage, nil,
			"queue " + prefix + ".missing: not found"},
		{"a wrong password", []string{"--rabbitmq-management", strings.Replace(mgmt, "guest:guest", "guest:wrong", 1)}, cli.ExitUsage, nil,
			"401 Unauthorized: give a user with the management or monitoring tag"},
	}
	for _, tt := range tests {
		code, rep, errOut := runDoctor(t, tt.args...)
		if got := found(rep); code != tt.code || !slices.Equal(got, tt.want) || !strings.Contains(errOut, tt.stderr) {
			t.Errorf("%s: exit %d (want %d), findings %q (want %q)\nstderr %q (want %q)", tt.name, code, tt.code, got, tt.want, errOut, tt.stderr)
		}
	}
	// Every queue of the node when none is named: the classic one among them.
	code, rep, errOut := runDoctor(t, "--rabbitmq-management", mgmt)
	if code != cli.ExitFindings || !slices.Contains(found(rep), "rabbitmq queue "+classic+" (vhost /): x-queue-type=classic") ||
		slices.Contains(found(rep), "rabbitmq queue "+quorum+" (vhost /): x-queue-type=classic") {
		t.Errorf("every queue: exit %d, %q\n%s", code, found(rep), errOut)
	}
}

// enableManagement enables the management plugin on the test node
// (MSGCONTRACT_RABBITMQ_DIR, as rabbitmq-start.sh made it) on a free
// loopback port, disables it when t ends, and returns the API's URL with
// guest's credentials.
func enableManagement(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MSGCONTRACT_RABBITMQ_DIR")
	ports, err := os.ReadFile(filepath.Join(dir, "ports"))
	if dir == "" || err != nil {
		t.Fatalf("MSGCONTRACT_RABBITMQ_DIR %q has no ports file (%v): run under scripts/with-rabbitmq.sh", dir, err)
	}
	var port, dist, epmd int
	if _, err := fmt.Sscan(string(ports), &port, &dist, &epmd); err != nil {
		t.Fatalf("%s/ports: %v", dir, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mport := l.Addr().(*net.TCPAddr).Port
	l.Close()
	// The node's own rabbitmqctl, not Debian's wrapper, which switches to
	// the system's rabbitmq user and cookie.
	ctl := func(tool string, args ...string) error {
		cmd := exec.Command("/usr/lib/rabbitmq/bin/"+tool, args...)
		cmd.Env = append(os.Environ(), "HOME="+filepath.Join(dir, "home"), fmt.Sprintf("RABBITMQ_NODENAME=msgcontract-test-%d@localhost", port),
			"RABBITMQ_USE_LONGNAME=false", fmt.Sprintf("ERL_EPMD_PORT=%d", epmd), "RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(dir, "enabled_plugins"),
			"RABBITMQ_CONF_ENV_FILE="+filepath.Join(dir, "rabbitmq-env.conf"), "RABBITMQ_CONFIG_FILE="+filepath.Join(dir, "rabbitmq.conf"))
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
		}
		return nil
	}
	// What rabbitmq-plugins enable --online does, in one call of the
	// node's rabbitmqctl (each CLI start costs seconds on a loaded
	// machine): write the plugins file the node reads, and have it start
	// what the file names.
	plugins := filepath.Join(dir, "enabled_plugins")
	ensure := func(list string) error {
		if err := os.WriteFile(plugins, []byte("["+list+"]."), 0o644); err != nil {
			return err
		}
		return ctl("rabbitmqctl", "eval", fmt.Sprintf(`application:set_env(rabbitmq_management, tcp_config, [{ip, "127.0.0.1"}, {port, %d}]), `+
			`{ok, _, _} = rabbit_plugins:ensure(%q).`, mport, plugins))
	}
	t.Cleanup(func() {
		if err := ensure(""); err != nil {
			t.Error(err)
		} else if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", mport)); err == nil {
			c.Close()
			t.Errorf("the management API still listens on %d after the plugin was disabled", mport)
		}
	})
	if err := ensure("rabbitmq_management"); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://guest:guest@127.0.0.1:%d", mport)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/api/overview", mport), nil)
		req.SetBasicAuth("guest", "guest")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the management API on port %d does not answer: %v", mport, err)
		}
	}
}
