#!/usr/bin/env bash
# Install the runtime on a fresh machine and start Operator Lab on the bundled model (offline).
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q -r requirements.txt
exec python -m streamlit run app.py "$@"
