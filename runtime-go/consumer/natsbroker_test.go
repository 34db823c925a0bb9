package consumer_test

// natsBroker is filled in by the NATS transport.
var natsBroker = brokerKind{"natsjs", nil}
