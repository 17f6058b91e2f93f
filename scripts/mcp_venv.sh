#!/usr/bin/env bash
# mcp_venv.sh - the Python virtualenv the MCP and server tests and figures
# use, with the official MCP SDK, an offline tokenizer (bpe-openai: OpenAI's
# cl100k_base built in; tiktoken would download it at run time) and an
# OpenAPI validator (the server's document), pinned.
#
#   scripts/mcp_venv.sh                 create or update it (idempotent)
#   scripts/mcp_venv.sh --print-python  only print its interpreter's path
#
# Lives in ${ASKDB_VENV:-~/.cache/askdb/venv}; installs from PyPI only when
# a pin is not met, so a second run is a no-op.
set -euo pipefail

VENV=${ASKDB_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/askdb/venv}
PINS=(mcp==1.30.0 bpe-openai==0.1.4 openapi-spec-validator==0.7.2)

if [ "${1:-}" = "--print-python" ]; then
    printf '%s\n' "$VENV/bin/python"
    exit 0
fi

met() {
    "$VENV/bin/python" - "${PINS[@]}" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
for pin in sys.argv[1:]:
    name, want = pin.split("==")
    if version(name) != want:
        sys.exit(1)
PY
}

if [ -x "$VENV/bin/python" ] && met; then
    exit 0
fi
echo "mcp_venv: installing ${PINS[*]} into $VENV" >&2
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "${PINS[@]}"
met || { echo "mcp_venv: pins not met after install: ${PINS[*]}" >&2; exit 1; }
