"""`search serve`: the pages served from the database, live while a study runs, read-only."""

from __future__ import annotations

import gzip
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import pytest

from core.errors import UserError
from core.trials import EpochRecord, RunResult, TrialResult
from reports.hosts import host_allowed, host_name, served_hosts
from reports.server import VERSION_TTL_S, make_server, trial_filename
from reports.site import study_filename
from storage import Store
from tests.reports.test_browser import rendered_dom, script_errors
from tests.search.conftest import run_subprocess

BACKENDS = ["sqlite"] + (["postgresql"] if os.environ.get("SEARCH_TEST_POSTGRES_URL") else [])
TASK = dict(task="digits-denoise", metric="psnr", direction="maximize", budget=60_000)


def result(number: int, seeds: list[int], psnr: float) -> TrialResult:
    runs = [
        RunResult(
            s,
            "complete",
            {"psnr": psnr + i, "val_psnr": psnr + i},
            3,
            [EpochRecord(e, 1.0 / e, {"psnr": psnr - 3 + e + i}, 0.1 * e) for e in (1, 2, 3)],
            0.3,
        )
        for i, s in enumerate(seeds)
    ]
    return TrialResult(number, "complete", runs, 0.3, "cpu")


@pytest.fixture(params=BACKENDS)
def served(request, tmp_path):
    """A server over a database with two studies of one task (trial 2 of the first still running)."""
    url = f"sqlite:///{tmp_path / 'db.sqlite'}" if request.param == "sqlite" else os.environ["SEARCH_TEST_POSTGRES_URL"]
    names = [f"a-{uuid.uuid4().hex[:6]}", f"b-{uuid.uuid4().hex[:6]}"]
    store = Store(url)
    for k, name in enumerate(names):
        store.create_or_load_study(name, families=["hourglass", "conventional"], **TASK)
        for i, fam in enumerate(["hourglass", "conventional", "hourglass"]):
            n = store.add_trial(
                name,
                family=fam,
                config={"d_z": 70 + i, "d_h": 8 + i, "L": 1},
                params=9000 + 1000 * i,
                seeds=[1, 2],
                owner="test:1:x",
            )
            if k == 1 or i < 2:
                store.finish_trial(name, n, result(n, [1, 2], 14.0 + i + k))
    server = make_server(store, "127.0.0.1", 0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    yield base, store, names
    server.shutdown()
    server.server_close()
    if request.param == "postgresql":
        for name in names:
            store.delete_study(name)
    store.close()


def get(url: str, method: str = "GET") -> tuple[int, str]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_the_index_study_trial_and_compare_pages(served):
    base, store, (a, b) = served
    code, index = get(base)
    assert code == 200 and f'href="{study_filename(a)}"' in index and 'name="study"' in index
    code, page = get(base + study_filename(a))
    assert code == 200 and "Pareto front" in page and 'id="pareto-figure"' in page
    assert 'id="live-poll"' in page and 'http-equiv="refresh"' not in page  # trial 2 runs: the page asks /changed
    assert f'href="{trial_filename(a, 0)}"' in page
    code, page = get(base + study_filename(b))
    assert code == 200 and 'id="live-poll"' not in page  # nothing runs there
    code, trial = get(base + trial_filename(a, 1))
    assert code == 200 and "Trial #1 of" in trial and 'id="learning-figure"' in trial and "seed 2" in trial
    assert "<th>best validation psnr</th>" in trial and '<td class="num">3</td>' in trial  # runs table: 3 epochs
    code, cmp = get(base + f"compare.html?study={a}&study={b}")
    assert code == 200 and f"{a}: hourglass" in cmp and f"{b}: conventional" in cmp
    assert "Which shape wins" in cmp and 'id="wins-figure"' in cmp
    code, js = get(base + "plotly.min.js")
    assert code == 200 and len(js) > 1_000_000


def test_errors_and_writes_are_refused(served):
    base, store, (a, b) = served
    before = [(t.number, t.status) for t in store.trials(a)]
    assert get(base + "nope.html")[0] == 404
    assert get(base + trial_filename(a, 99))[0] == 404
    code, page = get(base + f"compare.html?study={a}")
    assert code == 400 and "at least two studies" in page
    code, page = get(base + "compare.html?study=nope&study=" + a)
    assert code == 400 and "no study named" in page
    code, page = get(base + f"compare.html?study={a}&study={b}&predict_at=1Q")
    assert code == 400 and "bad budget" in page
    code, page = get(base + f"compare.html?study={a}&study={b}&predict_at=1K")
    assert code == 400 and "predict_at 1K is not above the search budget" in page
    code, page = get(base + f"compare.html?study={a}&study={b}&predict_at=")  # the index form's empty field
    assert code == 200 and "Compare:" in page
    for method in ("POST", "PUT", "DELETE"):
        assert get(base + study_filename(a), method)[0] == 405
    assert [(t.number, t.status) for t in store.trials(a)] == before


def test_a_served_page_renders_in_the_browser(served, tmp_path):
    base, _, (a, b) = served  # b: no running trial, so the page does not reload during the check
    page = tmp_path / "served.html"
    page.write_text(get(base + study_filename(b))[1].replace("<head>", f'<head><base href="{base}">', 1))
    dom = rendered_dom(page)
    assert script_errors(dom) == "" and dom.count('class="plot-container plotly"') == 3


@pytest.mark.slow
def test_the_page_follows_a_running_study(tmp_path):
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    store = Store(url)
    server = make_server(store, "127.0.0.1", 0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    page_url = f"http://127.0.0.1:{server.server_address[1]}/{study_filename('live')}"
    run = run_subprocess(
        [
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "60K",
            "--trials",
            "4",
            "--epochs",
            "6",
            "--no-report",
            "--study",
            "live",
            "--seed-checks",
            "0",  # four trials, no check after them: the page's count below
            "--pruner",
            "none",  # and each trained to the end: four complete
            "--storage",
            url,
        ],
        cwd=tmp_path,
    )
    seen = []
    try:
        deadline = time.monotonic() + 240
        while run.poll() is None and time.monotonic() < deadline:
            code, page = get(page_url)
            if code == 200:
                seen.append(
                    (page.count('<td><span class="badge s-complete">complete</span></td>'), 'id="live-poll"' in page)
                )
            time.sleep(0.2)
        run.communicate(timeout=60)
        time.sleep(VERSION_TTL_S + 0.5)  # the server reads the studies' versions at most this often
        code, final = get(page_url)
    finally:
        server.shutdown()
        server.server_close()
    assert run.returncode == 0 and code == 200
    assert any(live for _, live in seen)  # while trials ran, the page followed them
    assert len({n for n, _ in seen}) >= 2  # and it changed as trials finished
    assert final.count('<td><span class="badge s-complete">complete</span></td>') == 4 and 'id="live-poll"' not in final


def get_as(url: str, host: str | None) -> tuple[int, str]:
    """GET `url` with this Host header (None: none at all), as a rebinding page would."""
    import http.client

    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    conn.putrequest("GET", parts.path or "/", skip_host=True)
    if host is not None:
        conn.putheader("Host", host)
    conn.endheaders()
    r = conn.getresponse()
    try:
        return r.status, r.read().decode()
    finally:
        conn.close()


def test_a_request_for_another_host_is_refused(served):
    """DNS rebinding: a page of evil.example whose name now resolves to 127.0.0.1 sends
    Host: evil.example; the server refuses it (403, nothing of the studies), while the
    address served and the loopback names are answered."""
    base, _, (a, b) = served
    port = urllib.parse.urlsplit(base).port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}", "127.0.0.1"):
        code, page = get_as(base + study_filename(a), host)
        assert code == 200 and a in page, host
    for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}", "", None):
        code, page = get_as(base + study_filename(a), host)
        assert code == 403 and a not in page and "hourglass" not in page, host
    assert "--allow-host evil.example" in get_as(base, f"evil.example:{port}")[1]


def test_allowed_hosts_are_answered(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    server = make_server(store, "127.0.0.1", 0, quiet=True, allow_hosts=["Lab-Box.local", "10.0.0.5:8080"])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        assert get_as(base, "lab-box.local:8080")[0] == 200 and get_as(base, "10.0.0.5")[0] == 200
        assert get_as(base, "other.local")[0] == 403
    finally:
        server.shutdown()
        server.server_close()
        store.close()


def test_host_rules():
    assert host_name("Example.ORG:8080") == "example.org" and host_name("[::1]:80") == "::1"
    assert host_name("::1") == "::1" and host_name("") is None and host_name(None) is None
    assert served_hosts("127.0.0.1") == {"127.0.0.1", "localhost", "::1"}
    assert served_hosts("192.168.1.7") == {"192.168.1.7"}
    assert "localhost" in served_hosts("0.0.0.0") and "0.0.0.0" in served_hosts("0.0.0.0")
    assert host_allowed("anything.example", served_hosts("127.0.0.1", ["*"]))
    assert not host_allowed("anything.example", served_hosts("127.0.0.1"))
    with pytest.raises(UserError, match="--allow-host takes a host name"):
        served_hosts("127.0.0.1", ["a b"])


def get_with(url: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_an_unchanged_page_is_answered_304_and_a_new_trial_changes_it(served, monkeypatch):
    """Issue 33: ETag / Last-Modified on the study pages and the index, 304 to a conditional
    request while the study is unchanged, a new ETag once a trial is added."""
    import reports.server as server

    monkeypatch.setattr(server, "VERSION_TTL_S", 0.0)  # see every change at once
    base, store, (a, b) = served
    url = base + study_filename(b)
    code, headers, body = get_with(url, {})
    etag, modified = headers["ETag"], headers["Last-Modified"]
    assert "Content-Encoding" not in headers
    assert code == 200 and etag.startswith('"') and headers["Cache-Control"] == "no-cache" and b"Pareto front" in body
    code, again, empty = get_with(url, {"If-None-Match": etag})
    assert code == 304 and again["ETag"] == etag and empty == b""
    assert get_with(url, {"If-Modified-Since": modified})[0] == 304
    assert get_with(url, {"If-None-Match": '"something else"'})[0] == 200
    code, zipped, packed = get_with(url, {"Accept-Encoding": "gzip, deflate"})  # as a browser asks
    assert code == 200 and zipped["Content-Encoding"] == "gzip" and zipped["ETag"] == "W/" + etag
    assert gzip.decompress(packed) == body and len(packed) < len(body) / 3
    assert get_with(url, {"Accept-Encoding": "gzip", "If-None-Match": zipped["ETag"]})[0] == 304
    code, _, page = get_with(base + study_filename(a), {})
    assert code == 200 and get_with(base, {"If-None-Match": get_with(base, {})[1]["ETag"]})[0] == 304  # the index

    n = store.add_trial(b, family="hourglass", config={"d_z": 70, "d_h": 8, "L": 1}, params=9000, seeds=[1])
    code, headers, body = get_with(url, {"If-None-Match": etag})
    assert code == 200 and headers["ETag"] != etag and f">{n}<".encode() in body
    new = headers["ETag"]
    store.finish_trial(b, n, result(n, [1], 30.0))
    assert get_with(url, {"If-None-Match": new})[0] == 200


def test_a_live_page_asks_whether_it_changed(served, monkeypatch):
    import re

    import reports.server as server

    monkeypatch.setattr(server, "VERSION_TTL_S", 0.0)
    base, store, (a, b) = served
    page = get(base + study_filename(a))[1]  # trial 2 runs
    poll = re.search(r'fetch\("(changed\?page=[^"]+)"', page)[1].replace("\\u0026", "&")
    assert get(base + poll) == (200, "unchanged")
    assert get(base + "changed?page=index.html&etag=" + get_with(base, {})[1]["ETag"].strip('"')) == (200, "unchanged")
    store.finish_trial(a, 2, result(2, [1, 2], 20.0))
    assert get(base + poll) == (200, "changed")
    assert get(base + poll.replace(slugify_name(a), "gone"))[1] == "changed"  # a study that is not there
    code, text = get(base + "changed?page=compare.html&etag=x")
    assert code == 400 and "study pages and the index do" in text


def slugify_name(name: str) -> str:
    return study_filename(name)[len("study-") : -len(".html")]


def test_one_build_serves_many_pollers(served):
    """64 requests at once for a page nobody asked before: one build, then none."""
    _, store, (a, b) = served
    srv = make_server(store, "127.0.0.1", 0, quiet=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}/{study_filename(b)}"
    codes = []
    try:
        threads = [threading.Thread(target=lambda: codes.append(get(url)[0])) for _ in range(64)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert get(url)[0] == 200
    finally:
        srv.shutdown()
        srv.server_close()
    assert codes == [200] * 64 and srv.RequestHandlerClass.pages.cache.builds == 1


def test_a_live_page_polls_without_script_errors(served, tmp_path):
    base, _, (a, b) = served  # a: trial 2 runs, so the page carries the poll script
    page = tmp_path / "live.html"
    text = get(base + study_filename(a))[1]
    assert 'id="live-poll"' in text
    page.write_text(text.replace("<head>", f'<head><base href="{base}">', 1))
    dom = rendered_dom(page)  # 5 s of virtual time: the first poll runs
    assert script_errors(dom) == "" and dom.count('class="plot-container plotly"') == 3
