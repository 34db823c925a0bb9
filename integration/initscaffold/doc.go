// Package initscaffold holds only a test: each scaffold `msgcontract init`
// writes (Go, Java, Python) builds and runs against this checkout's
// runtimes, which its files never name: the Go scaffold builds in a copy
// given a replace, the Python one in a fresh virtualenv with runtime-python
// installed from here, the Java one against the runtime that `make
// runtime-java` installed into ~/.m2 (issue #33). `make release-check`
// does the same against dist/ instead (scripts/release-check.sh).
package initscaffold
