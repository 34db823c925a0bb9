// Command demo runs the payment-callback system end to end on one machine:
// a Java order service publishes through its outbox, a Go payment-callback
// service and a Python reconciliation service consume the same events with
// generated code, a schema registry rejects an incompatible contract change,
// and the run ends with invariants computed from the databases.
//
// Run it with `make demo` from the repository root (it sets up the Python
// and Java toolchains first). Exit status 0 means every invariant held.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	var cfg Config
	flag.IntVar(&cfg.Orders, "orders", 24, "how many orders the Java order service creates")
	flag.StringVar(&cfg.Transport, "transport", "sqlite", "the transport: sqlite (embedded), nats (in-process JetStream), kafka (a broker at -brokers), rabbitmq (a node at -rabbitmq) or rocketmq (a broker at -rocketmq)")
	flag.StringVar(&cfg.Brokers, "brokers", "", "Kafka brokers host:port,... for -transport kafka (default $"+brokersEnv+", set by scripts/with-kafka.sh)")
	flag.StringVar(&cfg.RabbitMQ, "rabbitmq", "", "RabbitMQ AMQP URL amqp://user:password@host:5672/ for -transport rabbitmq (default $"+rabbitmqEnv+", set by scripts/with-rabbitmq.sh)")
	flag.StringVar(&cfg.RocketMQ.NameServer, "rocketmq", "", "RocketMQ name server host:port for -transport rocketmq (default $"+rocketmqNamesrvEnv+", set by scripts/with-rocketmq.sh)")
	flag.StringVar(&cfg.RocketMQ.Broker, "rocketmq-broker", "", "with -transport rocketmq: the master broker host:port, where the run's topics are created (default $"+rocketmqBrokerEnv+")")
	flag.StringVar(&cfg.RocketMQ.Proxy, "rocketmq-proxy", "", "with -transport rocketmq: the gRPC proxy host:port the Python service's 5.x client uses (default $"+rocketmqProxyEnv+")")
	flag.StringVar(&cfg.WorkDir, "work", ".build/demo", "working directory for databases and builds; emptied first")
	flag.BoolVar(&cfg.Verbose, "v", false, "print the services' logs")
	flag.StringVar(&cfg.OTLP, "otlp", os.Getenv(otlpEnv), "OTLP/HTTP endpoint (http://host:port) the services export their spans to (default $"+otlpEnv+"; make demo TRACE=1 starts Jaeger and sets it)")
	flag.StringVar(&cfg.JaegerUI, "jaeger-ui", os.Getenv(jaegerUIEnv), "Jaeger's query service (http://host:port): the closing trace line's API link, and where -hold-trace's page reads the trace (default $"+jaegerUIEnv+")")
	holdTrace := flag.Bool("hold-trace", false, "after the run, serve a page drawing the run's trace (read from -jaeger-ui) on a loopback port and wait for Ctrl-C, so that a throwaway Jaeger (make demo TRACE=1) still has it")
	flag.DurationVar(&cfg.Heartbeat, "heartbeat", 15*time.Second, "while a step runs longer, print a line saying so at this interval (0: never)")
	keep := flag.Bool("keep", false, "after the run, serve the registry's web console on its data until Ctrl-C")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := Run(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo: FAILED:", err)
		os.Exit(1)
	}
	// One loopback server after the run: the console (--keep) and, when
	// Jaeger has the run's trace, the page drawing it (/trace/<id>).
	view := res.TraceID != "" && res.JaegerUI != ""
	var ln net.Listener
	if *keep || (*holdTrace && view) {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			fmt.Fprintln(os.Stderr, "demo: FAILED:", err)
			os.Exit(1)
		}
		if view {
			res.TraceView = "http://" + ln.Addr().String()
		}
	}
	fmt.Println(res.Line())
	fmt.Println(res.TraceLine())
	if *keep {
		if err := serveConsole(ctx, cfg, res, ln, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "demo: console:", err)
		}
	} else {
		fmt.Println("console: make demo KEEP=1 (or --keep) serves the registry's web console on this run's data")
		switch {
		case *holdTrace && view:
			fmt.Println("trace: the page above draws the trace from Jaeger, which keeps this run's spans until Ctrl-C")
			if err := serve(ctx, ln, traceHold(res)); err != nil {
				fmt.Fprintln(os.Stderr, "demo: trace view:", err)
			}
		case *holdTrace && res.TraceID != "":
			fmt.Println("trace: Jaeger keeps this run's spans until Ctrl-C")
			<-ctx.Done()
		}
	}
	if !res.OK() {
		os.Exit(1)
	}
}
