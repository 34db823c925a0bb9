//go:build kafka

package ops

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/internal/doctor"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka/kafkatest"
)

// TestDoctorKafka runs on the single KRaft broker of scripts/with-kafka.sh
// (make test-kafka): a topic's replication factor of 1 is always a
// finding there; unclean leader election and min.insync.replicas are
// altered on the test's own topic to make and fix the others. A producer
// properties file is read beside the cluster.
func TestDoctorKafka(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	brokers := kafkatest.Brokers(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topic := kafkatest.Namespace() + "order-event"
	if _, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"unclean.leader.election.enable": kadm.StringPtr("true"),
		"min.insync.replicas": kadm.StringPtr("1")}, topic); err != nil {
		t.Fatal(err)
	}
	defer adm.DeleteTopics(ctx, topic)
	// CreateTopics answers before every broker serves the topic: doctor
	// asked at once could be told UNKNOWN_TOPIC_OR_PARTITION.
	waitTopicReady(t, adm, topic, 2)
	waitTopicConfig(t, adm, topic, map[string]string{"unclean.leader.election.enable": "true", "min.insync.replicas": "1"})
	producer := filepath.Join(t.TempDir(), "producer.properties")
	if err := os.WriteFile(producer, []byte("bootstrap.servers="+brokers[0]+"\nacks=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k := []string{"--kafka", strings.Join(brokers, ","), "--kafka-topic", topic}
	tests := []struct {
		name  string
		alter map[string]string
		args  []string
		code  int
		want  []string
	}{
		{"as created", nil, k, cli.ExitFindings,
			[]string{"replication.factor=1", "min.insync.replicas=1", "unclean.leader.election.enable=true"}},
		{"with the producer's file", nil, append([]string{"--kafka-client-config", producer}, k...), cli.ExitFindings,
			[]string{"acks=1", "replication.factor=1", "min.insync.replicas=1", "unclean.leader.election.enable=true"}},
		{"unclean election off", map[string]string{"unclean.leader.election.enable": "false"}, k, cli.ExitFindings,
			[]string{"replication.factor=1", "min.insync.replicas=1"}},
		{"min.insync.replicas not below the replication factor", map[string]string{"min.insync.replicas": "2"}, k, cli.ExitFindings,
			[]string{"replication.factor=1", "min.insync.replicas=2"}},
		{"a topic that does not exist", nil, append(k, "--kafka-topic", topic+".missing"), cli.ExitUsage,
			[]string{"replication.factor=1", "min.insync.replicas=2"}},
	}
	for _, tt := range tests {
		var alter []kadm.AlterConfig
		for name, v := range tt.alter {
			alter = append(alter, kadm.AlterConfig{Op: kadm.SetConfig, Name: name, Value: kadm.StringPtr(v)})
		}
		if len(alter) > 0 {
			rs, err := adm.AlterTopicConfigs(ctx, alter, topic)
			if err == nil {
				err = rs[0].Err
			}
			if err != nil {
				t.Fatalf("%s: alter %v: %v", tt.name, tt.alter, err)
			}
			waitTopicConfig(t, adm, topic, tt.alter)
		}
		code, rep, errOut := runDoctor(t, tt.args...)
		if got := settingsOf(rep); code != tt.code || !slices.Equal(got, tt.want) {
			t.Errorf("%s: exit %d (want %d), findings %q (want %q)\n%s", tt.name, code, tt.code, got, tt.want, errOut)
		}
		if code == cli.ExitUsage && !strings.Contains(errOut, "topic "+topic+".missing: ") {
			t.Errorf("%s: stderr does not name the missing topic: %s", tt.name, errOut)
		}
	}
	// Every topic when none is named: the test's own is among them.
	code, rep, errOut := runDoctor(t, "--kafka", strings.Join(brokers, ","))
	if code != cli.ExitFindings || !slices.ContainsFunc(rep.Findings, func(f doctor.Finding) bool { return f.Target == "topic "+topic }) {
		t.Errorf("every topic: exit %d, %d findings\n%s", code, len(rep.Findings), errOut)
	}
}

// waitTopicReady waits until the brokers' metadata has topic with its
// partitions, each with a leader.
func waitTopicReady(t *testing.T, adm *kadm.Client, topic string, partitions int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		tds, err := adm.ListTopics(context.Background(), topic)
		if err == nil {
			if td, ok := tds[topic]; ok && td.Err == nil && len(td.Partitions) == partitions &&
				!slices.ContainsFunc(td.Partitions.Sorted(), func(p kadm.PartitionDetail) bool { return p.Leader < 0 || p.Err != nil }) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic %s: not served with %d partitions within 15s (%v)", topic, partitions, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitTopicConfig waits until the broker describes topic with want: an
// altered config reaches the broker through the KRaft metadata log, after
// AlterConfigs has answered.
func waitTopicConfig(t *testing.T, adm *kadm.Client, topic string, want map[string]string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		rcs, err := adm.DescribeTopicConfigs(context.Background(), topic)
		if err == nil && len(rcs) == 1 && rcs[0].Err == nil {
			got := 0
			for _, c := range rcs[0].Configs {
				if v, ok := want[c.Key]; ok && c.Value != nil && *c.Value == v {
					got++
				}
			}
			if got == len(want) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic %s: configs %v not described within 15s (%v)", topic, want, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
