#!/usr/bin/env bash
# Makes sure a Redis answers at REDIS_URL when that is this machine (default 127.0.0.1:6379)
# before `npm start` and `npm test`: starts one,
# and on a Debian/Ubuntu machine where we are root installs redis-server with apt-get first.
# Portable: bash 3.2 (macOS) is enough, and the ping uses node (which npm needs anyway), not
# GNU `timeout`. Where it cannot install, it says what to install and stops at once.
set -euo pipefail
url="${REDIS_URL:-redis://127.0.0.1:6379}"
case "$url" in
  redis://127.0.0.1*|redis://localhost*) ;;
  *) echo "redis: REDIS_URL points elsewhere; not managing a local server"; exit 0 ;;
esac
port="${url#redis://*:}"; port="${port%%/*}"
case "$port" in ''|*[!0-9]*) port=6379 ;; esac

# PING with a 2 s bound; exit 0 only on +PONG.
ping_redis() {
  node -e '
    const s = require("net").connect(Number(process.argv[1]), "127.0.0.1");
    const done = (ok) => { s.destroy(); process.exit(ok ? 0 : 1); };
    setTimeout(() => done(false), 2000).unref();
    s.on("connect", () => s.write("PING\r\n"));
    s.on("data", (b) => done(b.toString().startsWith("+PONG")));
    s.on("error", () => done(false));
  ' "$port" 2>/dev/null
}

how_to_install() {
  case "$(uname -s)" in
    Darwin) echo "  macOS: brew install redis && brew services start redis   (or: docker run -d -p 6379:6379 redis:7)" ;;
    *) echo "  Debian/Ubuntu: sudo apt-get install redis-server   Fedora: sudo dnf install redis   (or: docker run -d -p 6379:6379 redis:7)" ;;
  esac
  echo "  or point REDIS_URL at a Redis 7 you already have."
}

if ping_redis; then echo "redis: answering at 127.0.0.1:$port"; exit 0; fi

if ! command -v redis-server >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "redis: not installed; installing redis-server with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq redis-server >/dev/null
  else
    echo "redis: nothing answers at 127.0.0.1:$port and redis-server is not installed. Install it:" >&2
    how_to_install >&2
    exit 1
  fi
fi

# a directory of its own, never the caller's (a dump.rdb there would be loaded), and no persistence
dir="${TMPDIR:-/tmp}/pin-auth-redis-$port"
node -e 'require("fs").mkdirSync(process.argv[1], { recursive: true })' "$dir"   # node: on every machine npm runs on
echo "redis: starting redis-server in $dir"
redis-server --daemonize yes --bind 127.0.0.1 --port "$port" --dir "$dir" --logfile "$dir/redis.log" --save "" --appendonly no >/dev/null
for _ in $(seq 1 50); do ping_redis && { echo "redis: up"; exit 0; }; sleep 0.2; done
echo "redis: redis-server did not answer within 10 s; see $dir/redis.log, or start it yourself:" >&2
how_to_install >&2
exit 1
