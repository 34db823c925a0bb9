#!/usr/bin/env bash
# Prints a TCP port free on 127.0.0.1 (the kernel's pick when python3 is
# there, else a probed random one), for the scripts that start throwaway
# servers.
set -euo pipefail
if command -v python3 >/dev/null; then
  exec python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
fi
for _ in $(seq 50); do
  p=$((20000 + RANDOM % 20000))
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; exit 0; fi
done
echo "free-port: no free port found" >&2
exit 1
