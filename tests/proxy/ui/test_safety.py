"""Cross-site posts are refused, belief text is always escaped, and with TENURE_API_KEY the UI
asks for the key once and keeps an HttpOnly, SameSite=Strict session cookie."""

from __future__ import annotations

from collections.abc import Callable

from tests.proxy.ui import seed
from tests.proxy.ui.conftest import UI


def test_form_post_without_the_csrf_token_changes_nothing(ui: UI) -> None:
    ui.csrf()  # the browser has the cookie, but the forged form has no token
    resp = ui.client.post("/beliefs/b-k8s/pin", data={"pinned": "false"}, follow_redirects=False)
    assert resp.status_code == 403 and "CSRF" in resp.text
    wrong = {"pinned": "false", "csrf_token": "guessed"}
    assert ui.client.post("/beliefs/b-k8s/pin", data=wrong).status_code == 403
    assert ui.belief("b-k8s").pinned
    ok = ui.form("/beliefs/b-k8s/pin", {"pinned": "false"})
    assert ok.status_code == 303 and ok.headers["location"] == "/beliefs/b-k8s?notice=unpinned"
    assert not ui.belief("b-k8s").pinned


def test_cross_site_origin_is_refused_on_forms_and_api(ui: UI) -> None:
    evil = {"origin": "https://evil.example"}
    form = {"csrf_token": ui.csrf(), "state": "rejected"}
    resp = ui.client.post("/beliefs/b-guess/review", data=form, headers=evil)
    assert resp.status_code == 403
    api = ui.client.post("/api/beliefs/b-guess/review", json={"state": "rejected"}, headers=evil)
    assert api.status_code == 403 and api.json()["error"]["field"] == "Origin"
    fetch_site = {"sec-fetch-site": "cross-site"}
    assert ui.client.delete("/api/beliefs/b-guess", headers=fetch_site).status_code == 403
    assert ui.belief("b-guess").review_state == "pending"
    assert ui.belief("b-guess").deleted_at is None
    same = {"origin": "http://localhost"}
    resp = ui.client.post(
        "/beliefs/b-guess/review", data=form, headers=same, follow_redirects=False
    )
    assert resp.status_code == 303 and ui.belief("b-guess").review_state == "rejected"


def test_api_writes_with_the_browser_cookie_need_the_csrf_header(ui: UI) -> None:
    token = ui.csrf()
    resp = ui.client.patch("/api/beliefs/b-tabs", json={"pinned": True})
    assert resp.status_code == 403 and resp.json()["error"]["field"] == "X-CSRF-Token"
    assert not ui.belief("b-tabs").pinned
    resp = ui.client.patch(
        "/api/beliefs/b-tabs", json={"pinned": True}, headers={"x-csrf-token": token}
    )
    assert resp.status_code == 200 and ui.belief("b-tabs").pinned
    # reads never need it
    assert ui.client.get("/api/beliefs/b-tabs").status_code == 200


def test_belief_text_is_escaped_everywhere(ui: UI) -> None:
    pages = [
        ui.client.get("/beliefs").text,
        ui.client.get("/beliefs", params={"q": "hostile markup"}).text,
        ui.client.get("/beliefs/b-hostile").text,
    ]
    for html in pages:
        assert "<script>alert" not in html
        assert "<b>bold</b>" not in html
        assert "<img src=x" not in html
    detail = pages[2]
    assert "&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt;" in detail
    assert "&lt;b&gt;bold&lt;/b&gt;" in detail
    assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in detail
    # a query echoed back is escaped too
    echoed = ui.client.get("/beliefs", params={"q": "<script>x</script>"}).text
    assert "<script>x" not in echoed and "&lt;script&gt;x&lt;/script&gt;" in echoed


def test_pages_forbid_inline_scripts(ui: UI) -> None:
    resp = ui.client.get("/beliefs")
    assert "script-src 'self'" in resp.headers["content-security-policy"]
    assert resp.headers["x-content-type-options"] == "nosniff"
    cookie = next(h for k, h in resp.headers.multi_items() if k == "set-cookie")
    assert "tenure_csrf=" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie


def test_with_an_access_key_the_ui_asks_for_it_once(make_ui: Callable[..., UI]) -> None:
    ui = make_ui(beliefs=seed.ALL, api_key="sk-local-secret")
    client = ui.client
    resp = client.get("/beliefs?scope=domain:code", follow_redirects=False)
    assert resp.status_code == 303
    assert resp.headers["location"] == "/login?next=%2Fbeliefs%3Fscope%3Ddomain%3Acode"
    assert client.get("/api/beliefs").status_code == 401
    assert client.get("/static/tenure.css").status_code == 200
    token = ui.csrf("/login")
    wrong = client.post("/login", data={"csrf_token": token, "key": "nope", "next": "/beliefs"})
    assert wrong.status_code == 401 and "not the access key" in wrong.text
    assert client.post("/login", data={"key": "sk-local-secret"}).status_code == 403  # no token
    resp = client.post(
        "/login",
        data={"csrf_token": token, "key": "sk-local-secret", "next": "/beliefs/b-k8s"},
        follow_redirects=False,
    )
    assert resp.status_code == 303 and resp.headers["location"] == "/beliefs/b-k8s"
    cookie = resp.headers["set-cookie"]
    assert cookie.startswith("tenure_session=")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert "kubernetes" in client.get("/beliefs/b-k8s").text
    assert client.get("/api/beliefs/b-k8s").status_code == 200  # the cookie works for the API
    session = client.cookies["tenure_session"]
    # logging out ends the session
    out = client.post("/logout", data={"csrf_token": ui.csrf()}, follow_redirects=False)
    assert out.status_code == 303 and "Max-Age=0" in out.headers["set-cookie"]
    assert client.get("/api/beliefs").status_code == 401
    # ...for good: the old cookie, replayed (copied before the logout), is refused too
    client.cookies.set("tenure_session", session)
    assert client.get("/api/beliefs").status_code == 401
    assert client.get("/beliefs", follow_redirects=False).status_code == 303


def test_a_forged_session_is_refused(make_ui: Callable[..., UI]) -> None:
    ui = make_ui(beliefs=seed.ALL, api_key="sk-local-secret")
    ui.client.cookies.set("tenure_session", "nonce.0000")
    assert ui.client.get("/api/beliefs").status_code == 401
    assert ui.client.get("/beliefs", follow_redirects=False).status_code == 303
    # scripts keep using the bearer key, without any CSRF token
    bearer = {"authorization": "Bearer sk-local-secret"}
    resp = ui.client.post(
        "/api/beliefs/b-guess/review", json={"state": "confirmed"}, headers=bearer
    )
    assert resp.status_code == 200


def test_login_only_redirects_to_this_server(make_ui: Callable[..., UI]) -> None:
    ui = make_ui(api_key="k")
    token = ui.csrf("/login")
    for target in ("https://evil.example/", "//evil.example/x", "/\\evil.example"):
        resp = ui.client.post(
            "/login",
            data={"csrf_token": token, "key": "k", "next": target},
            follow_redirects=False,
        )
        assert resp.headers["location"] == "/beliefs"


def test_the_login_form_refuses_an_address_that_keeps_guessing(
    make_ui: Callable[..., UI],
) -> None:
    ui = make_ui(api_key="k")
    token = ui.csrf("/login")
    for _ in range(10):
        resp = ui.client.post("/login", data={"csrf_token": token, "key": "guess"})
        assert resp.status_code == 401
    resp = ui.client.post("/login", data={"csrf_token": token, "key": "k"}, follow_redirects=False)
    assert resp.status_code == 429 and int(resp.headers["retry-after"]) >= 1
    assert "Too many wrong keys" in resp.text and "set-cookie" not in resp.headers


def test_a_foreign_host_name_is_refused_on_a_loopback_bind(ui: UI) -> None:
    """DNS rebinding: a page at evil.example re-pointed at 127.0.0.1 is same-origin with
    itself, so only the Host header tells; the API and pages answer loopback names only."""
    rebound = {"host": "evil.example:5757"}
    resp = ui.client.get("/api/beliefs", headers=rebound)
    assert resp.status_code == 403 and resp.json()["error"]["field"] == "Host"
    assert ui.client.get("/beliefs", headers=rebound).status_code == 403
    assert ui.client.delete("/api/beliefs/b-tabs", headers=rebound).status_code == 403
    assert ui.belief("b-tabs").deleted_at is None
    for host in ("localhost:5757", "127.0.0.1:5757", "[::1]:5757"):
        assert ui.client.get("/api/beliefs", headers={"host": host}).status_code == 200


def test_a_non_loopback_bind_answers_any_host_name(make_ui: Callable[..., UI]) -> None:
    ui = make_ui(beliefs=seed.ALL, host="0.0.0.0", api_key="k")
    bearer = {"authorization": "Bearer k", "host": "tenure.internal:5757"}
    assert ui.client.get("/api/beliefs", headers=bearer).status_code == 200


def test_one_refusal_renders_as_each_room_expects(make_ui: Callable[..., UI]) -> None:
    """The same error (no access key) is the OpenAI envelope on /v1, the API's JSON on /api
    and a page, escaped and running nothing, on the UI's paths."""
    ui = make_ui(beliefs=seed.ALL, api_key="k")
    chat = ui.client.post("/v1/chat/completions", json={"model": "m", "messages": []})
    assert chat.status_code == 401
    assert chat.json()["error"]["code"] == "invalid_api_key"
    assert "status" not in chat.json()["error"]
    api = ui.client.get("/api/beliefs")
    assert api.status_code == 401
    assert api.json()["error"]["status"] == 401
    page = ui.client.post("/beliefs/b-k8s/pin", data={"pinned": "false"})
    assert page.status_code == 401
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == "default-src 'none'"
    assert "missing or wrong access key" in page.text and "<h1>401</h1>" in page.text
    assert ui.belief("b-k8s").pinned


def test_the_login_page_shows_no_navigation_and_no_log_out(make_ui: Callable[..., UI]) -> None:
    """Every link would lead back to the login page, and there is nothing to log out of."""
    ui = make_ui(api_key="sk-local-secret")
    page = ui.client.get("/login").text
    assert "Log in" in page and 'action="/logout"' not in page and "Log out" not in page
    assert 'href="/audit"' not in page and 'href="/api-reference"' not in page
    signed_in = ui.client.post(
        "/login",
        data={"csrf_token": ui.csrf("/login"), "key": "sk-local-secret", "next": "/beliefs"},
    )
    assert 'action="/logout"' in signed_in.text and 'href="/audit"' in signed_in.text
