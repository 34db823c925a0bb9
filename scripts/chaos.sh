#!/usr/bin/env bash
# make chaos: runtime-go/bench/chaos on the transport and business database
# asked for, under the servers it needs, each started here and stopped
# afterwards. Settings (make variables or environment):
#
#   TRANSPORT  sqlite (the embedded queue; default), sqlite-shared, nats,
#              kafka or rabbitmq
#   BUSINESS   sqlite (default), postgres or mysql: where the effects and
#              the dedup claims are
#   MESSAGES   unique messages (default 20000; 60000 with FAULTS, so that a
#              run at RATE lasts long enough for every fault to come)
#   FAULTS     kill, pause, partition, db-restart, broker-kill, comma-
#              separated (runtime-go/bench/chaos/faults.go). Unset: the
#              classic run, every delivery published at once, consumers
#              SIGKILLed (and the broker on kafka and rabbitmq). Set: the
#              deliveries published at RATE a second (default 2000), a fault
#              every 2-5 s, and each retry's delay judged against the
#              contract's schedule (retry_delay_violations=N). partition or
#              db-restart on the embedded queue puts the business database
#              in PostgreSQL unless BUSINESS says otherwise: a file has no
#              network to cut and no server to crash.
#   RATE       deliveries a second with FAULTS (default 2000)
#
# A crash of the business database must not lose a commit the consumer
# was told of, so its servers run with durable commits here (the test
# defaults trade that for speed; msgcontract doctor flags them).
set -euo pipefail
cd "$(dirname "$0")/.."
transport=${TRANSPORT:-sqlite}
business=${BUSINESS:-}
faults=${FAULTS:-}
messages=${MESSAGES:-}
[[ -n $messages ]] || { [[ -n $faults ]] && messages=60000 || messages=20000; }
rate=${RATE:-2000}

args=(-messages "$messages" -transport "$transport")
if [[ -z $faults ]]; then
  case $transport in
    kafka | rocketmq) args+=(-kill-min 2s -kill-max 5s) ;;
    rabbitmq) args+=(-outbox -kill-min 2s -kill-max 5s) ;;
  esac
else
  if [[ -z $business && $transport == sqlite* && ($faults == *partition* || $faults == *db-restart*) ]]; then
    business=postgres
    echo "chaos: FAULTS=$faults on the embedded queue: the business database is PostgreSQL (BUSINESS=mysql for MariaDB)" >&2
  fi
  args+=(-faults "$faults" -handler-delay 0 -kill-min 2s -kill-max 5s)
  # RabbitMQ's run publishes through a producer's outbox and a relay,
  # which set their own pace (500 a second).
  if [[ $transport == rabbitmq ]]; then args+=(-outbox); else args+=(-rate "$rate"); fi
fi
business=${business:-sqlite}
args+=(-business "$business")

wrap=()
case $business in
  sqlite) ;;
  postgres) export MSGCONTRACT_PG_DURABLE=1; wrap+=(bash scripts/with-postgres.sh) ;;
  mysql) export MSGCONTRACT_MARIADB_FLUSH=2; wrap+=(bash scripts/with-mariadb.sh) ;;
  *) echo "chaos: BUSINESS=$business: want sqlite, postgres or mysql" >&2; exit 2 ;;
esac
case $transport in
  sqlite | sqlite-shared | nats) ;;
  kafka) wrap+=(bash scripts/with-kafka.sh) ;;
  rabbitmq) wrap+=(bash scripts/with-rabbitmq.sh) ;;
  rocketmq) wrap+=(bash scripts/with-rocketmq.sh) ;;
  *) echo "chaos: TRANSPORT=$transport: want sqlite, sqlite-shared, nats, kafka, rabbitmq or rocketmq" >&2; exit 2 ;;
esac

mkdir -p .build/bin
(cd runtime-go && "${GO:-go}" build -o ../.build/bin/chaos ./bench/chaos)
exec "${wrap[@]}" .build/bin/chaos "${args[@]}"
