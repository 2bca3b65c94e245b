#!/usr/bin/env bash
# Serve a class from one machine: N Streamlit processes behind HAProxy, with sticky sessions.
#
#   scripts/serve_class.sh 2                      # students open http://<this host>:8501
#   scripts/serve_class.sh --front h1:8501 h2:8501 h3:8501   # only the balancer, in front of other hosts
#
# Streamlit keeps every session inside one Python process, so one process uses about one core for its
# scripts. Here N processes listen on 127.0.0.1:8601.. and HAProxy on :8501 sends each new student to the
# process with the fewest connections and pins them there with a cookie (a session's websocket, its media
# and its reconnects must reach the same process). The model cache is memory-mapped, so the N processes
# share one copy of the weights in the page cache (bench/RESULTS_load.md measures it).
# Environment: OPERATOR_LAB_PORT (8501), OPERATOR_LAB_FIRST_PORT (8601), OPERATOR_LAB_ADDRESS (0.0.0.0,
# where HAProxy listens), OPERATOR_LAB_BACKEND_ADDRESS (127.0.0.1, where the processes listen),
# OPERATOR_LAB_RUN_DIR (a new temp folder: haproxy.cfg, logs, pid files), OMP_NUM_THREADS (cores / N).
# Classroom limits (OPERATOR_LAB_CLASSROOM=1, ...) pass through to every process. The processes do not watch
# their source files (a file saved mid-lesson would reload modules under running sessions).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v haproxy >/dev/null; then
  echo "haproxy is not installed. On Debian/Ubuntu: sudo apt-get install -y haproxy" >&2
  exit 2
fi

PORT=${OPERATOR_LAB_PORT:-8501}
FIRST=${OPERATOR_LAB_FIRST_PORT:-8601}
ADDRESS=${OPERATOR_LAB_ADDRESS:-0.0.0.0}
BACKEND_ADDRESS=${OPERATOR_LAB_BACKEND_ADDRESS:-127.0.0.1}
RUN_DIR=${OPERATOR_LAB_RUN_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/operator-lab-class.XXXXXX")}
mkdir -p "$RUN_DIR"
rm -f "$RUN_DIR/ready"

servers=()        # "name host:port" lines for the HAProxy backend
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for _ in $(seq 20); do              # a server busy in a long run may take a while to stop
    alive=0; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [[ $alive == 0 ]] && break; sleep 0.5
  done
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 143' INT TERM

# wait_health HOST PORT [PID]: until http://HOST:PORT/_stcore/health answers (90 s), or PID has exited
wait_health() {
  python - "$@" <<'EOF'
import os, sys, time, urllib.request
host = "127.0.0.1" if sys.argv[1] == "0.0.0.0" else sys.argv[1]
for _ in range(180):
    if len(sys.argv) > 3 and not os.path.exists(f"/proc/{sys.argv[3]}"):
        sys.exit(1)                   # it exited: its log says why
    try:
        urllib.request.urlopen(f"http://{host}:{sys.argv[2]}/_stcore/health", timeout=2); sys.exit(0)
    except OSError:
        time.sleep(0.5)
sys.exit(1)
EOF
}

if [[ "${1:-}" == "--front" ]]; then
  shift
  [[ $# -ge 1 ]] || { echo "usage: $0 --front host:port [host:port ...]" >&2; exit 2; }
  k=0
  for hp in "$@"; do k=$((k + 1)); servers+=("host$k $hp"); done
  COOKIE=OPERATOR_LAB_HOST            # each host's own HAProxy pins to a process with OPERATOR_LAB_SERVER
else
  N=${1:?usage: $0 N (the number of Streamlit processes)}
  COOKIE=OPERATOR_LAB_SERVER
  [[ "$N" =~ ^[1-9][0-9]*$ ]] || { echo "N must be a positive integer, got '$N'" >&2; exit 2; }
  CORES=$(nproc)
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(( CORES / N > 0 ? CORES / N : 1 ))}
  # one cookie secret for every process, so a signed cookie from one is valid in another
  export STREAMLIT_SERVER_COOKIE_SECRET=${STREAMLIT_SERVER_COOKIE_SECRET:-$(python -c "import secrets; print(secrets.token_hex(32))")}
  for ((k = 0; k < N; k++)); do
    p=$((FIRST + k))
    python -m streamlit run app.py --server.port "$p" --server.address "$BACKEND_ADDRESS" \
      --server.headless true --browser.gatherUsageStats false --server.fileWatcherType none \
      >"$RUN_DIR/streamlit-$p.log" 2>&1 &
    pids+=($!)
    echo $! >"$RUN_DIR/streamlit-$p.pid"
    servers+=("s$((k + 1)) $BACKEND_ADDRESS:$p")
  done
  for ((k = 0; k < N; k++)); do       # wait until each answers its health check
    p=$((FIRST + k))
    wait_health "$BACKEND_ADDRESS" "$p" "${pids[$k]}" || { echo "process on port $p did not start: $RUN_DIR/streamlit-$p.log" >&2; exit 1; }
  done
fi

CFG="$RUN_DIR/haproxy.cfg"
{
  cat <<EOF
global
    maxconn 4096

defaults
    mode http
    option forwardfor
    timeout connect 5s
    timeout client  60s
    timeout server  60s
    timeout tunnel  8h          # an open websocket (a student's session) may sit idle through a lesson
    timeout http-keep-alive 10s

frontend class
    bind $ADDRESS:$PORT
    default_backend streamlit

backend streamlit
    balance leastconn           # sessions are long: fewest open connections, not round robin
    cookie $COOKIE insert indirect nocache httponly
    option httpchk GET /_stcore/health
EOF
  for s in "${servers[@]}"; do
    set -- $s
    echo "    server $1 $2 check cookie $1"
  done
} >"$CFG"
haproxy -c -q -f "$CFG"
haproxy -db -f "$CFG" >"$RUN_DIR/haproxy.log" 2>&1 &
pids+=($!)
echo $! >"$RUN_DIR/haproxy.pid"
wait_health 127.0.0.1 "$PORT" || { echo "HAProxy did not answer on port $PORT: $RUN_DIR/haproxy.log" >&2; exit 1; }
touch "$RUN_DIR/ready"
echo "Operator Lab: ${#servers[@]} backend(s) behind HAProxy on $ADDRESS:$PORT (config, logs, pids: $RUN_DIR). Ctrl-C stops all."
wait
