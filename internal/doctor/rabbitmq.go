package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// RabbitMQConfig names the management HTTP API CheckRabbitMQ reads the
// queues' types from (AMQP 0-9-1 cannot list queues nor tell a queue's
// type).
type RabbitMQConfig struct {
	// ManagementURL is the management plugin's API root with credentials,
	// http://user:password@host:15672 (rabbitmq-plugins enable
	// rabbitmq_management; a user tagged monitoring is enough).
	ManagementURL string
	VHost         string   // only this virtual host's queues; every one when empty
	Queues        []string // only these queues; every queue when empty
}

// Validate reports a RabbitMQConfig without a usable management URL.
func (c *RabbitMQConfig) Validate() error {
	u, err := url.Parse(c.ManagementURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("rabbitmq: management URL %q: want http://user:password@host:15672 (the management plugin's port)", c.ManagementURL)
	}
	return nil
}

func (c *RabbitMQConfig) target() string {
	u, err := url.Parse(c.ManagementURL)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Host
}

type rabbitQueue struct {
	Name      string `json:"name"`
	VHost     string `json:"vhost"`
	Type      string `json:"type"`
	Durable   bool   `json:"durable"`
	Exclusive bool   `json:"exclusive"`
}

// CheckRabbitMQ lists the queues through the management API and reports
// each classic one: a classic queue's messages live on one node, so that
// node's loss loses them (and a non-durable one loses them on a restart);
// a quorum queue keeps a message once a majority of its replicas has it.
// Exclusive queues (a connection's own, gone with it) are left out.
func CheckRabbitMQ(ctx context.Context, cfg RabbitMQConfig) ([]Finding, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	u, _ := url.Parse(cfg.ManagementURL)
	user := u.User
	u.User = nil
	api := strings.TrimSuffix(u.String(), "/") + "/api/queues"
	if cfg.VHost != "" {
		api += "/" + url.PathEscape(cfg.VHost)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, api+"?columns=name,vhost,type,durable,exclusive", nil)
	if err != nil {
		return nil, err
	}
	if user != nil {
		pw, _ := user.Password()
		req.SetBasicAuth(user.Username(), pw)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w (is the management plugin enabled: rabbitmq-plugins enable rabbitmq_management?)", api, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", api, err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, fmt.Errorf("GET %s: %s: give a user with the management or monitoring tag in the URL (http://user:password@host:15672)", api, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s: %s", api, resp.Status)
	}
	var queues []rabbitQueue
	if err := json.Unmarshal(body, &queues); err != nil {
		return nil, fmt.Errorf("GET %s: not the management API's queue list: %w", api, err)
	}
	var fs []Finding
	seen := map[string]bool{}
	for _, q := range queues {
		if len(cfg.Queues) > 0 && !slices.Contains(cfg.Queues, q.Name) {
			continue
		}
		seen[q.Name] = true
		if q.Exclusive || q.Type != "classic" {
			continue
		}
		risk := "a classic queue is not replicated: its node's loss loses its acknowledged messages"
		if !q.Durable {
			risk = "a non-durable classic queue: a restart of its node loses every message in it"
		}
		fs = append(fs, Finding{System: "rabbitmq", Target: "queue " + q.Name + " (vhost " + q.VHost + ")", Setting: "x-queue-type", Value: "classic", Want: "quorum",
			Risk: risk,
			Fix:  "declare it with x-queue-type=quorum (a queue's type cannot change: create the quorum queue, move its bindings and consumers, drain and delete the classic one), or default_queue_type = quorum for the vhost"})
	}
	var errs []error
	for _, q := range cfg.Queues {
		if !seen[q] {
			errs = append(errs, fmt.Errorf("queue %s: not found", q))
		}
	}
	if len(cfg.Queues) == 0 && len(queues) == 0 {
		errs = append(errs, errors.New("no queues to check: name them with --rabbitmq-queue once they exist"))
	}
	return fs, errors.Join(errs...)
}

// CheckRabbitMQClientFile reads a RabbitMQ publisher's settings from a
// Java-style properties file (Spring Boot's): publisher confirms are on
// when spring.rabbitmq.publisher-confirm-type is correlated or simple
// (or the older spring.rabbitmq.publisher-confirms is true). Spring's
// default is none: a file that sets neither is a finding.
func CheckRabbitMQClientFile(path string) ([]Finding, error) {
	props, err := readProperties(path)
	if err != nil {
		return nil, err
	}
	return rabbitClientFindings(path, props), nil
}

func rabbitClientFindings(path string, props map[string]string) []Finding {
	const setting = "spring.rabbitmq.publisher-confirm-type"
	f := Finding{System: "rabbitmq-client", Target: path, Setting: setting, Want: "correlated (or simple)",
		Risk: "without publisher confirms a publish is fire-and-forget: a message the broker never stored (node down, queue full, no route) is lost while the outbox marks it sent",
		Fix:  setting + "=correlated in " + path + " (and spring.rabbitmq.publisher-returns=true with mandatory publishes)"}
	if v, ok := props[setting]; ok {
		if t := strings.ToLower(v); t == "correlated" || t == "simple" {
			return nil
		}
		f.Value = v
		return []Finding{f}
	}
	if v, ok := props["spring.rabbitmq.publisher-confirms"]; ok {
		if strings.ToLower(v) == "true" {
			return nil
		}
		f.Setting, f.Value, f.Want = "spring.rabbitmq.publisher-confirms", v, "true (or publisher-confirm-type=correlated)"
		return []Finding{f}
	}
	f.Value = "unset (Spring's default: none)"
	return []Finding{f}
}
