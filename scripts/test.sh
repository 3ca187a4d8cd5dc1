#!/usr/bin/env bash
# Install what the tests need, then run them (the command .ci/run calls).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --test
exec .venv/bin/pytest -q -ra "$@"
