package modules

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const runtimeModule = "github.com/msgcontract/msgcontract/runtime-go"

// service is a consumer on Kafka with PostgreSQL as its business
// database: the packages a Kafka shop links.
const service = `package main

import (
	"fmt"

	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/pgdb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
)

func main() {
	var k kafka.Config
	_, err := consumer.New(consumer.Config{})
	fmt.Println(k.Validate() != nil, err != nil, pgdb.Open != nil)
}
`

// TestKafkaServicePullsNoOtherBroker builds the service in a fresh module
// outside the checkout, requiring runtime-go's core and Kafka modules
// from this checkout (replace, as a release's go.mod would require
// versions), and reads its go.sum and module graph after go mod tidy.
func TestKafkaServicePullsNoOtherBroker(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("the go command is not on PATH")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/svc\n\ngo 1.26\n\nrequire (\n" +
		"\t" + runtimeModule + " v0.0.0\n" +
		"\t" + runtimeModule + "/transport/kafka v0.0.0\n)\n\nreplace (\n" +
		"\t" + runtimeModule + " => " + filepath.Join(root, "runtime-go") + "\n" +
		"\t" + runtimeModule + "/transport/kafka => " + filepath.Join(root, "runtime-go", "transport", "kafka") + "\n)\n"
	write(t, filepath.Join(dir, "go.mod"), gomod)
	write(t, filepath.Join(dir, "main.go"), service)

	run(t, dir, "go", "mod", "tidy")
	run(t, dir, "go", "build", "-o", filepath.Join(dir, "svc"), ".")
	out := run(t, dir, filepath.Join(dir, "svc"))
	if strings.TrimSpace(out) != "true true true" {
		t.Fatalf("the service printed %q, want \"true true true\"", out)
	}
	sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	graph := run(t, dir, "go", "list", "-m", "all")
	if !strings.Contains(graph, "github.com/twmb/franz-go") {
		t.Fatalf("franz-go is not in the Kafka service's module graph; the test no longer builds a Kafka consumer:\n%s", graph)
	}
	for _, banned := range []string{"github.com/nats-io/nats-server", "github.com/nats-io/nats.go", "github.com/rabbitmq/amqp091-go", "github.com/apache/rocketmq-client-go", "github.com/redis/go-redis", "github.com/go-sql-driver/mysql"} {
		if strings.Contains(string(sum), banned) {
			t.Errorf("go.sum of a service on Kafka names %s: a runtime-go module it requires, or the tests of a package it imports, depend on it", banned)
		}
		if strings.Contains(graph, banned) {
			t.Errorf("the module graph of a service on Kafka holds %s", banned)
		}
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs a command in dir in module mode (no go.work of the checkout
// applies outside it, and GOWORK=off says so) and returns its output.
func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}
