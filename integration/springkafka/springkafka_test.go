//go:build kafka

package springkafka_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/msgcontract/msgcontract/internal/surefire"
	"github.com/msgcontract/msgcontract/internal/testsummary"
)

// latenessLine is what DeliveryTest prints per database: how long after
// its not_before each retry copy ran.
var latenessLine = regexp.MustCompile(`(?m)^retry lateness after not_before \((\w+)\): (.+)$`)

func TestSpringKafka(t *testing.T) {
	for _, v := range []string{"MSGCONTRACT_KAFKA_BROKERS", "MSGCONTRACT_PG_DSN", "MSGCONTRACT_MYSQL_DSN"} {
		if os.Getenv(v) == "" {
			t.Fatalf("%s is not set: run under scripts/with-postgres.sh, scripts/with-mariadb.sh and scripts/with-kafka.sh (make test-spring)", v)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	java := filepath.Join(root, "runtime-java")
	mod := filepath.Join(java, "spring-kafka")
	reports := filepath.Join(mod, "target", "surefire-reports")
	if err := os.RemoveAll(reports); err != nil {
		t.Fatal(err)
	}
	// The starter and the modules it depends on, built and installed; the
	// test filter keeps core's and kafka's suites (make runtime-java, make
	// test-java-kafka) out of this run.
	cmd := exec.Command("mvn", "-B", "-Dstyle.color=never", "-pl", "spring-kafka", "-am", "install",
		"-Dtest=io.msgcontract.spring.kafka.*Test", "-Dsurefire.failIfNoSpecifiedTests=false")
	cmd.Dir = java
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mvn -pl spring-kafka -am install in runtime-java: %v\n%s", err, surefire.Tail(out, 80))
	}
	ran, skipped := surefire.Reports(t, reports)
	want := surefire.Declared(t, filepath.Join(mod, "src", "test", "java"))
	if ran != want || skipped != 0 {
		t.Fatalf("%d JUnit tests ran, %d skipped; the sources declare %d\n%s", ran, skipped, want, surefire.Tail(out, 40))
	}
	lines := latenessLine.FindAllSubmatch(out, -1)
	if len(lines) == 0 {
		t.Fatalf("DeliveryTest printed no retry lateness line\n%s", surefire.Tail(out, 40))
	}
	for _, m := range lines {
		t.Logf("retry copies ran after their not_before on %s: %s", m[1], m[2])
	}
	testsummary.Report(t, "spring", fmt.Sprintf("%d passed, 0 failed", ran))
}
