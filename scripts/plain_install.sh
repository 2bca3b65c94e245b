#!/usr/bin/env bash
# The user's install, tested (issue 37): a fresh venv from requirements.txt alone, the app started in it as the
# README says with the defaults users get (no OPERATOR_LAB_* or STREAMLIT_* variable), then every page in zh and en
# in headless Chromium with every fold and tab opened one at a time (scripts/plain_install_walk.py, run from THIS
# Python, which has Playwright; the app's venv has no Playwright). Fails on an exception box, an st.error box, a
# traceback, "Page not found" or a page that never finishes, and lists each with its page, language and fold or tab.
#
#   bash scripts/plain_install.sh [VENV_DIR]
#
# VENV_DIR (or PLAIN_INSTALL_VENV): where the venv is built, emptied first (default: a temp folder, removed after).
# PLAIN_INSTALL_PORT: the app's port (default: a free one). PLAIN_INSTALL_BUDGET: seconds for the whole lane
# (default 1500). PLAIN_INSTALL_PAGES=scale,overview: only these pages (a quicker look while fixing one).
# Needs: python with playwright (requirements-dev.txt) and /usr/bin/chromium (scripts/test.sh installs both).
# The app prepares the bundled model into its default cache (~/.cache/operator-lab) on first start if it is not
# there yet, as a user's first start does. Logs and failure screenshots: artifacts/plain-install/.
set -euo pipefail
{   # the whole script is read before it runs: editing this file during a run cannot change the run
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
START=$(date +%s)
BUDGET=${PLAIN_INSTALL_BUDGET:-1500}
WORK=$(mktemp -d -t plain-install.XXXXXX)
VENV=${1:-${PLAIN_INSTALL_VENV:-$WORK/venv}}
OUT=artifacts/plain-install
SERVER_PID='' WALK_PID='' CHILD_PID='' STOP_RC=0
mkdir -p "$OUT"
rm -f "$OUT"/*.png

stop_group() {   # a process group we started (its leader's pid), TERM then KILL
  local pid=$1 i
  [ -n "$pid" ] || return 0
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  STOP_RC=0
  wait "$pid" || STOP_RC=$?
}

bg() {           # run a long step in the background and wait for it, so INT/TERM reach the trap at once
  local rc=0
  "$@" & CHILD_PID=$!
  wait "$CHILD_PID" || rc=$?
  CHILD_PID=''
  return "$rc"
}

cleanup() {
  local rc=$? p
  trap - EXIT INT TERM
  [ -z "$CHILD_PID" ] || kill -TERM "$CHILD_PID" 2>/dev/null || true
  stop_group "$WALK_PID"
  stop_group "$SERVER_PID" 2>/dev/null     # bash's own "Aborted" line for it would be unexplained: the note says it
  # Streamlit exits 0 on SIGTERM; anything else is worth a look (a note, not a failure of the lane)
  if [ -n "$SERVER_PID" ] && (( STOP_RC != 0 )); then
    echo "plain install: note: the app server exited with status $STOP_RC when stopped: $(tail -1 "$WORK/server.log")"
  fi
  # Playwright starts Chromium in a process group of its own; the walk ran with TMPDIR=$WORK, so a browser left
  # behind by a killed walk has its profile under $WORK: those processes, and only those, are ours to stop.
  for p in /proc/[0-9]*; do
    if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "$WORK/"; then
      kill -KILL "${p#/proc/}" 2>/dev/null || true
    fi
  done
  [ -f "$WORK/server.log" ] && cp "$WORK/server.log" "$OUT/server.log"
  [ -f "$WORK/pip.log" ] && cp "$WORK/pip.log" "$OUT/pip.log"
  [[ $VENV != "$WORK"/* ]] || echo "plain install: removing the temp venv (~2 GB: up to a minute on a busy disk)"
  rm -rf "$WORK"
  echo "plain install: total $(( $(date +%s) - START )) s (logs in $OUT/)"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- what the lane itself needs: Chromium and Playwright in this Python, venv's ensurepip ---------------------
[ -x /usr/bin/chromium ] ||
  { echo "plain install: FAILED: no /usr/bin/chromium (scripts/test.sh installs it)"; exit 1; }
"$PY" -c "import playwright" 2>/dev/null ||
  { echo "plain install: FAILED: $PY has no playwright (pip install -r requirements-dev.txt)"; exit 1; }
if ! "$PY" -c "import ensurepip" 2>/dev/null; then
  if [ "${CI:-}" = true ] && command -v apt-get >/dev/null; then       # Debian's python3 keeps venv in a package
    apt-get install -y -qq python3-venv >/dev/null
  else
    echo "plain install: FAILED: $PY cannot make a venv (no ensurepip; on Debian: apt-get install python3-venv)"; exit 1
  fi
fi

# ---- 1. a venv from requirements.txt alone -----------------------------------------------------------------
t0=$(date +%s)
echo "plain install: building a venv from requirements.txt alone in $VENV"
bg "$PY" -m venv --clear "$VENV"
if ! bg "$VENV/bin/python" -m pip install -r requirements.txt >"$WORK/pip.log" 2>&1; then
  tail -30 "$WORK/pip.log"; echo "plain install: FAILED: pip install -r requirements.txt"; exit 1
fi
if "$VENV/bin/python" -c "import playwright" 2>/dev/null; then
  echo "plain install: FAILED: playwright is in the app's venv: requirements.txt must not pull test tools"; exit 1
fi
"$VENV/bin/python" -m pip freeze >"$OUT/freeze.txt" 2>/dev/null
VENV_S=$(( $(date +%s) - t0 ))
echo "plain install: venv built in ${VENV_S} s ($(wc -l <"$OUT/freeze.txt") packages, $OUT/freeze.txt)"

# ---- 2. the app as the README starts it, with the defaults ------------------------------------------------------
PORT=${PLAIN_INSTALL_PORT:-$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')}
unset_args=()
for v in $(compgen -e); do
  case $v in OPERATOR_LAB_*|STREAMLIT_*|PYTHONPATH|PYTHONHOME|PYTHONSTARTUP) unset_args+=(-u "$v") ;; esac
done
t0=$(date +%s)
# setsid: the server leads its own process group, so the trap stops it with whatever it started
setsid env "${unset_args[@]}" VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" \
  "$VENV/bin/python" -m streamlit run app.py --server.headless true --server.port "$PORT" \
  --browser.gatherUsageStats false --server.fileWatcherType none >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
until [ "$(curl -s --max-time 2 "http://127.0.0.1:$PORT/_stcore/health" 2>/dev/null)" = ok ]; do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    tail -30 "$WORK/server.log"; echo "plain install: FAILED: the app exited before it was healthy"; exit 1
  fi
  if (( $(date +%s) - t0 > 300 )); then
    tail -30 "$WORK/server.log"; echo "plain install: FAILED: no /_stcore/health after 300 s"; exit 1
  fi
  sleep 0.5
done
echo "plain install: app healthy on port $PORT after $(( $(date +%s) - t0 )) s"

# ---- 3-5. every page, fold and tab in Chromium, from this Python -------------------------------------------
LEFT=$(( START + BUDGET - $(date +%s) ))
(( LEFT > 60 )) || { echo "plain install: FAILED: no time left for the walk (PLAIN_INSTALL_BUDGET=$BUDGET)"; exit 1; }
t0=$(date +%s)
walk_args=(--url "http://127.0.0.1:$PORT" --server-log "$WORK/server.log" --deadline $(( START + BUDGET - 30 ))
           --shots "$OUT" --report "$OUT/walk.txt")
[ -n "${PLAIN_INSTALL_PAGES:-}" ] && walk_args+=(--pages "$PLAIN_INSTALL_PAGES")
# timeout leads its own process group (the trap stops the walk and Playwright's driver with it); TMPDIR puts the
# browser's profile under $WORK (see cleanup)
TMPDIR=$WORK timeout -k 20 "$LEFT" "$PY" scripts/plain_install_walk.py "${walk_args[@]}" &
WALK_PID=$!
rc=0
wait "$WALK_PID" || rc=$?
WALK_PID=''
(( rc != 124 && rc != 137 )) || echo "plain install: FAILED: the walk ran past the lane's budget ($BUDGET s)"
echo "plain install: venv ${VENV_S} s, walk $(( $(date +%s) - t0 )) s"
exit "$rc"
}
