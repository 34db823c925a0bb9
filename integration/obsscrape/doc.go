// Package obsscrape holds the cross-language metrics test (build tag obs,
// make test-obs): a real Prometheus server (Debian's prometheus) scrapes a
// Go, a Java and a Python process that ran the same messages through their
// runtime, and the test checks through Prometheus' HTTP API that all three
// expose the same series of docs/DESIGN.md's vocabulary, with the same
// labels, counts and bucket edges.
package obsscrape
