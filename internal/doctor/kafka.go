package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// KafkaConfig names the cluster and topics CheckKafka reads.
type KafkaConfig struct {
	Brokers []string // seed brokers, host:port
	Topics  []string // the topics to check; every non-internal topic when empty
	// Opts are extra franz-go options (TLS, SASL) for the admin client.
	Opts []kgo.Opt
}

// Validate reports a KafkaConfig without brokers.
func (c *KafkaConfig) Validate() error {
	if len(c.Brokers) == 0 || slices.Contains(c.Brokers, "") {
		return errors.New("kafka: no seed brokers: want host:port[,host:port...]")
	}
	return nil
}

// Replication and min.insync.replicas the runtime wants: an acks=all
// write is on at least two brokers, and one broker down stops no write.
const (
	kafkaMinReplication = 3
	kafkaMinISR         = 2
)

// CheckKafka reads each topic's replication factor (its smallest
// partition's), min.insync.replicas and unclean.leader.election.enable
// (the topic's effective values: its own or the broker's default) through
// the admin API.
func CheckKafka(ctx context.Context, cfg KafkaConfig) ([]Finding, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cfg.Brokers...)}, cfg.Opts...)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	unreachable := func(err error) error {
		return fmt.Errorf("broker %s unreachable: %w (is the cluster up, and are the brokers right?)", strings.Join(cfg.Brokers, ","), err)
	}
	details, err := adm.ListTopics(ctx, cfg.Topics...)
	if err != nil {
		return nil, unreachable(err)
	}
	var topics []string
	var errs []error
	for name, d := range details {
		if d.Err != nil {
			errs = append(errs, fmt.Errorf("topic %s: %w", name, d.Err))
			continue
		}
		topics = append(topics, name)
	}
	slices.Sort(topics)
	if len(topics) == 0 {
		if len(errs) == 0 {
			errs = append(errs, errors.New("the cluster has no topics to check: name them with --kafka-topic once they exist"))
		}
		return nil, errors.Join(errs...)
	}
	configs, err := adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return nil, unreachable(err)
	}
	byTopic := map[string]map[string]string{}
	for _, rc := range configs {
		if rc.Err != nil {
			errs = append(errs, fmt.Errorf("topic %s: configs: %w", rc.Name, rc.Err))
			continue
		}
		m := map[string]string{}
		for _, c := range rc.Configs {
			if c.Value != nil {
				m[c.Key] = *c.Value
			}
		}
		byTopic[rc.Name] = m
	}
	var fs []Finding
	for _, topic := range topics {
		conf, ok := byTopic[topic]
		if !ok {
			continue
		}
		rf := -1
		for _, p := range details[topic].Partitions {
			if rf < 0 || len(p.Replicas) < rf {
				rf = len(p.Replicas)
			}
		}
		tf, err := kafkaTopicFindings(strings.Join(cfg.Brokers, ","), topic, rf, conf)
		if err != nil {
			errs = append(errs, err)
		}
		fs = append(fs, tf...)
	}
	return fs, errors.Join(errs...)
}

func kafkaTopicFindings(brokers, topic string, rf int, conf map[string]string) ([]Finding, error) {
	var fs []Finding
	target := "topic " + topic
	alter := func(kv string) string {
		return "kafka-configs.sh --bootstrap-server " + brokers + " --alter --entity-type topics --entity-name " + topic + " --add-config " + kv
	}
	if rf >= 0 && rf < kafkaMinReplication {
		fs = append(fs, Finding{System: "kafka", Target: target, Setting: "replication.factor", Value: strconv.Itoa(rf), Want: ">= 3",
			Risk: "an acknowledged record lives on fewer than three brokers: losing one or two of them loses it, or stops the topic",
			Fix:  "add replicas with kafka-reassign-partitions.sh --bootstrap-server " + brokers + " --execute --reassignment-json-file (three brokers a partition), and default.replication.factor=3 in server.properties for new topics"})
	}
	isrText, ok := conf["min.insync.replicas"]
	isr, err := strconv.Atoi(isrText)
	if !ok || err != nil {
		return fs, fmt.Errorf("topic %s: min.insync.replicas unreadable (%q)", topic, isrText)
	}
	switch {
	case isr < kafkaMinISR:
		fs = append(fs, Finding{System: "kafka", Target: target, Setting: "min.insync.replicas", Value: isrText, Want: ">= 2 and < replication.factor",
			Risk: "an acks=all write is acknowledged once a single broker has it: that broker's loss loses it",
			Fix:  alter("min.insync.replicas=2") + " (min.insync.replicas=2 in server.properties for new topics)"})
	case rf >= 0 && isr >= rf:
		fs = append(fs, Finding{System: "kafka", Target: target, Setting: "min.insync.replicas", Value: isrText, Want: "< replication.factor " + strconv.Itoa(rf),
			Risk: "one broker down leaves fewer in-sync replicas than required: every acks=all write fails until it is back",
			Fix:  "raise the replication factor above " + isrText + " or " + alter("min.insync.replicas="+strconv.Itoa(max(rf-1, kafkaMinISR)))})
	}
	unclean, ok := conf["unclean.leader.election.enable"]
	if !ok {
		return fs, fmt.Errorf("topic %s: unclean.leader.election.enable unreadable", topic)
	}
	if unclean != "false" {
		fs = append(fs, Finding{System: "kafka", Target: target, Setting: "unclean.leader.election.enable", Value: unclean, Want: "false",
			Risk: "a replica that missed acknowledged records can become leader and truncate them away",
			Fix:  alter("unclean.leader.election.enable=false") + " (and unclean.leader.election.enable=false in server.properties)"})
	}
	return fs, nil
}

// CheckKafkaClientFile reads a Kafka producer's settings from a
// Java-style properties file: acks and enable.idempotence, plain (Kafka
// clients) or under spring.kafka.producer (Spring Boot). A setting left
// out takes the client's default, acks=all and enable.idempotence=true
// since Kafka clients 3.0 (franz-go's too), and is not a finding.
func CheckKafkaClientFile(path string) ([]Finding, error) {
	props, err := readProperties(path)
	if err != nil {
		return nil, err
	}
	return kafkaClientFindings(path, props), nil
}

func kafkaClientFindings(path string, props map[string]string) []Finding {
	var fs []Finding
	if key, acks, ok := lookup(props, "acks", "spring.kafka.producer.acks", "spring.kafka.producer.properties.acks"); ok {
		if a := strings.ToLower(acks); a != "all" && a != "-1" {
			fs = append(fs, Finding{System: "kafka-client", Target: path, Setting: key, Value: acks, Want: "all (or -1)",
				Risk: "the leader acknowledges a record before its replicas have it: the leader's loss loses acknowledged records (and idempotence is off)",
				Fix:  key + "=all in " + path})
		}
	}
	if key, idem, ok := lookup(props, "enable.idempotence", "spring.kafka.producer.properties.enable.idempotence"); ok && strings.ToLower(idem) != "true" {
		fs = append(fs, Finding{System: "kafka-client", Target: path, Setting: key, Value: idem, Want: "true",
			Risk: "a retried send can write a record twice or out of order: dedup absorbs the copy, but a reordered retry can land after a later event of the same key",
			Fix:  key + "=true in " + path})
	}
	return fs
}
