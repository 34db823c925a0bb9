package io.msgcontract.spring.kafka;

/**
 * The databases every behaviour runs on: each {@code @ParameterizedTest} of the suite takes
 * {@code @EnumSource(Db.class)} (integration/springkafka counts its runs from these constants).
 */
enum Db {
  POSTGRES,
  MARIADB
}
