#!/usr/bin/env bash
# tests/web/run.sh - the browser tests of askdb's page (make web-test).
#
#   ASKDB=build/asan/askdb FAKE_LLM=build/asan/fake_llm bash tests/web/run.sh
#   WEB_SERVER=mock bash tests/web/run.sh      (tests/web/mock_server.py)
#   bash tests/web/run.sh --filter chart       (tests whose name has "chart")
#
# Drives Debian's chromium through chromium-driver with python3-selenium
# (scripts/deps.sh installs them; this script installs nothing and fails
# when one is missing). Screenshots go to build/screenshots/ (SHOTS=DIR).
# Exit status 0 only when every test passed.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MODE=${WEB_SERVER:-real}
SHOTS=${SHOTS:-$ROOT/build/screenshots}

missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
# Debian's selenium lives in Debian's python3, which a version manager's
# python3 on the PATH may not see.
PY=
for p in /usr/bin/python3 python3; do
    if "$p" -c 'import selenium' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || missing+=(python3-selenium)
if [ ${#missing[@]} -gt 0 ]; then
    echo "web-test: missing ${missing[*]} (run scripts/deps.sh)" >&2
    exit 2
fi

[ -f "$ROOT/examples/shop.db" ] || { echo "web-test: examples/shop.db is missing (make examples/shop.db)" >&2; exit 2; }
if [ "$MODE" = real ]; then
    for v in ASKDB FAKE_LLM; do
        [ -x "${!v:-}" ] || { echo "web-test: $v is not an executable (${!v:-unset})" >&2; exit 2; }
    done
fi

export no_proxy='127.0.0.1,localhost' NO_PROXY='127.0.0.1,localhost'
exec "$PY" "$HERE/browser_test.py" --server "$MODE" --shots "$SHOTS" "$@"
