#!/usr/bin/env bash
# Makes sure a Redis answers at 127.0.0.1:6379: starts one, installing redis-server if needed.
set -euo pipefail
case "${REDIS_URL:-redis://127.0.0.1:6379}" in
  redis://127.0.0.1:6379*|redis://localhost:6379*) ;;
  *) echo "redis: REDIS_URL points elsewhere; not managing a local server"; exit 0 ;;
esac
ping_redis() {
  timeout 2 bash -c 'exec 3<>/dev/tcp/127.0.0.1/6379 && printf "PING\r\n" >&3 && head -c 5 <&3' 2>/dev/null | grep -q PONG
}
if ping_redis; then echo "redis: answering at 127.0.0.1:6379"; exit 0; fi
if ! command -v redis-server >/dev/null 2>&1; then
  echo "redis: not installed; installing redis-server"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq redis-server >/dev/null
fi
echo "redis: starting redis-server"
redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
for _ in $(seq 1 50); do ping_redis && { echo "redis: up"; exit 0; }; sleep 0.2; done
echo "redis: failed to start" >&2
exit 1
