// Package springkafka holds the test that runs runtime-java/spring-kafka's
// JUnit suite (io.msgcontract:msgcontract-spring-kafka, the Spring Boot
// starter) against a real broker, PostgreSQL and MariaDB: it runs the Maven
// build of the module and what it depends on (only the starter's tests run;
// core's and kafka's have targets of their own), checks that every @Test and
// every case of every @ParameterizedTest ran and none was skipped, and
// reports the count as the spring suite. Build tag kafka; `make test-spring`
// runs it under scripts/with-postgres.sh, scripts/with-mariadb.sh and
// scripts/with-kafka.sh.
package springkafka
