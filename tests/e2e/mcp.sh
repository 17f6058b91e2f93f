#!/usr/bin/env bash
# tests/e2e/mcp.sh - end-to-end tests of `askdb mcp` (stdio,
# tests/e2e/mcp_test.py) and of askdb serve's /mcp (Streamable HTTP,
# tests/e2e/mcp_http_test.py) with the official MCP Python SDK, which
# scripts/mcp_venv.sh installs (pinned) into a virtualenv first; then both
# with the SDK's 2.x client (tests/e2e/mcp2_test.py, its own virtualenv
# from scripts/mcp2_venv.sh).
#
#   ASKDB=build/asan/askdb FAKE_LLM=build/asan/fake_llm bash tests/e2e/mcp.sh
#   bash tests/e2e/mcp.sh --filter 'cancel'      (ERE on test names)
#   E2E_KEEP=1  keep the temp dir      E2E_VERBOSE=1  print a failure's traceback
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
"$ROOT/scripts/mcp_venv.sh"
PY=$("$ROOT/scripts/mcp_venv.sh" --print-python)
"$PY" "$HERE/mcp_test.py" "$@"
[ $# -eq 0 ] || exit 0   # a filter selects stdio tests only
"$PY" "$HERE/mcp_http_test.py"
"$ROOT/scripts/mcp2_venv.sh"
exec "$("$ROOT/scripts/mcp2_venv.sh" --print-python)" "$HERE/mcp2_test.py"
