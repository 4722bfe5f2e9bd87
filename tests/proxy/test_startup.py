"""Start-up does only what `/healthz` needs: the heavy libraries (the MCP SDK, LiteLLM, the
word lists) load after the app answers, not on the import of the app."""

from __future__ import annotations

from pathlib import Path

from tests.child_python import run_python

HEAVY = ("mcp", "litellm", "wordfreq")


def test_importing_the_app_leaves_the_heavy_libraries_for_later() -> None:
    code = f"import sys, proxy.app\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    out = run_python(code)
    assert out.strip() == ""


def test_a_server_on_a_duckdb_store_loads_no_postgres_driver_nor_mcp_sdk(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from starlette.testclient import TestClient\n"
        "from proxy.app import create_app\n"
        "from proxy.settings import Settings\n"
        f"settings = Settings.load(environ={{'TENURE_HOME': {str(tmp_path)!r}}},\n"
        "    upstream_url='http://127.0.0.1:9', extract_workers=0)\n"
        "with TestClient(create_app(settings), base_url='http://localhost') as client:\n"
        "    assert client.get('/healthz').status_code == 200\n"
        "    assert client.get('/api/beliefs').status_code == 200\n"
        "    print(','.join(m for m in ('psycopg', 'mcp') if m in sys.modules))\n"
    )
    out = run_python(code)
    assert out.strip() == "", out
