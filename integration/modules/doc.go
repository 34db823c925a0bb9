// Package modules holds only a test: a service that requires runtime-go's
// core module and its Kafka module builds a consumer without nats-server,
// go-redis or a MySQL driver entering its go.sum (issue #32).
package modules
