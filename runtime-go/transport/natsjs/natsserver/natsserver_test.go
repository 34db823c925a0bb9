package natsserver_test

import (
	"testing"

	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs/natsserver"
)

func TestStartServesJetStream(t *testing.T) {
	s, err := natsserver.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	nc, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AccountInfo(); err != nil {
		t.Fatalf("JetStream is not enabled: %v", err)
	}
}
