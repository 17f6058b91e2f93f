#!/usr/bin/env bash
# mcp2_venv.sh - a second Python virtualenv, with the MCP Python SDK 2.x
# (mcp 2.3.0, the 2026-07-28 era's client), for tests/e2e/mcp2_test.py:
# askdb must keep working with the clients of today, not only with the
# 1.x SDK that scripts/mcp_venv.sh pins for the other tests. Every package
# is pinned by version and sha256 in scripts/mcp2_requirements.txt.
#
#   scripts/mcp2_venv.sh                 create or update it (idempotent)
#   scripts/mcp2_venv.sh --print-python  only print its interpreter's path
#
# Lives in ${ASKDB_VENV2:-~/.cache/askdb/venv-mcp2}; installs from PyPI only
# when the lock file changed since the last install, so a second run is a
# no-op.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VENV=${ASKDB_VENV2:-${XDG_CACHE_HOME:-$HOME/.cache}/askdb/venv-mcp2}
LOCK=$HERE/mcp2_requirements.txt
SDK=mcp==2.3.0

if [ "${1:-}" = "--print-python" ]; then
    printf '%s\n' "$VENV/bin/python"
    exit 0
fi

want=$(sha256sum "$LOCK" | cut -d' ' -f1)
met() {
    [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.lock-sha256" 2>/dev/null)" = "$want" ] &&
        "$VENV/bin/python" - "$SDK" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
name, want = sys.argv[1].split("==")
sys.exit(version(name) != want)
PY
}

if met; then
    exit 0
fi
grep -q "^$SDK " "$LOCK" || { echo "mcp2_venv: $LOCK does not pin $SDK" >&2; exit 1; }
echo "mcp2_venv: installing $SDK (scripts/mcp2_requirements.txt) into $VENV" >&2
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check \
    --require-hashes --only-binary :all: -r "$LOCK" || {
    echo "mcp2_venv: install failed: a hash that does not match is a wheel" \
         "for another Python or platform than the lock's (CPython 3.11," \
         "x86_64 Linux): renew the lock as its header says" >&2
    exit 1
}
printf '%s\n' "$want" > "$VENV/.lock-sha256"
met || { echo "mcp2_venv: $SDK not installed after install" >&2; exit 1; }
