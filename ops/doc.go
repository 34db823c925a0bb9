// Package ops holds no Go code: it is where the shipped operations files
// live (prometheus/: alert rules and their promtool fixtures; grafana/: a
// dashboard), and its test checks them with promtool and against the
// metric vocabulary of docs/DESIGN.md ("Observability").
package ops
