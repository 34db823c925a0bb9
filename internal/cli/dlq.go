package cli

var newDLQCmd = notYet("dlq", "Inspect, replay and purge dead-lettered messages")
