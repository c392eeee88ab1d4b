"""Downloads on first use, against an HTTP server on 127.0.0.1 started here, serving fixture
files built here (a tiny CIFAR-10 archive, a small text), with the registry's addresses and
checksums pointed at them: a good download is cached and used, a checksum mismatch or an
interrupted download leaves nothing in the cache and gives a one-line error."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import socket
import subprocess
import sys
import tarfile
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import tasks
from core.errors import DataError
from tasks.datasets import catalog, cifar10, fetch, sources, text
from tasks.datasets.cifar10 import load_cifar10
from tasks.datasets.sources import Remote
from tests.tasks.test_classify import write_cifar

REPO = Path(__file__).resolve().parents[3]
REAL_DOWNLOAD = fetch.download  # tests/tasks/conftest.py replaces it with one that refuses


@dataclass
class Server:
    """What the test server serves (path -> bytes), how, and the paths asked for."""

    port: int = 0
    files: dict[str, bytes] = field(default_factory=dict)
    mode: str = "ok"  # "ok", or "short": the full Content-Length, half the body, then close
    hits: list[str] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture
def server(monkeypatch):
    state = Server()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            state.hits.append(self.path)
            body = state.files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body if state.mode == "ok" else body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setattr(fetch, "download", REAL_DOWNLOAD)  # the real one, against this server only
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def cifar_archive(tmp_path, extra_members=()) -> bytes:
    """A cifar-10-python.tar.gz of tiny batches (20 train images a batch, 10 test), with
    the official member names, plus `extra_members` (TarInfo, bytes or None)."""
    folder = write_cifar(tmp_path / "src")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(folder, arcname="cifar-10-batches-py", recursive=False)
        for name in sources.CIFAR10_FILES:
            tar.add(folder / name, arcname=f"cifar-10-batches-py/{name}")
        for info, data in extra_members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def serve_cifar(monkeypatch, server, archive: bytes, sha256: str | None = None) -> None:
    server.files["/cifar.tar.gz"] = archive
    monkeypatch.setattr(
        cifar10,
        "REMOTE",
        Remote(
            sources.CIFAR10_ARCHIVE,
            (server.url("/cifar.tar.gz"),),
            sha256 or hashlib.sha256(archive).hexdigest(),
            len(archive),
        ),
    )


TEXT = ("Before we proceed any further, hear me speak.\n" * 400).encode()


def serve_tiny(monkeypatch, server, body: bytes = TEXT, sha256: str | None = None) -> None:
    server.files["/input.txt"] = body
    monkeypatch.setattr(
        sources,
        "TINY_SHAKESPEARE_REMOTE",
        Remote(sources.TINY_SHAKESPEARE_FILE, (server.url("/input.txt"),), sha256 or hashlib.sha256(body).hexdigest()),
    )


def cache_files() -> list[Path]:
    root = fetch.cache_root()
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def assert_nothing_cached() -> None:
    """No file and no folder (a .part, a half-unpacked folder) under the cache."""
    root = fetch.cache_root()
    assert not root.exists() or list(root.rglob("*")) == [], list(root.rglob("*"))


# ------------------------------------------------------------------- good downloads


def test_cifar10_is_downloaded_unpacked_cached_and_used(tmp_path, monkeypatch, server, capsys):
    serve_cifar(monkeypatch, server, cifar_archive(tmp_path))
    splits = load_cifar10()
    assert splits.sizes() == (90, 10, 10) and server.hits == ["/cifar.tar.gz"]
    folder = fetch.cache_root() / "cifar-10-batches-py"
    assert cache_files() == sorted(folder / n for n in sources.CIFAR10_FILES)  # the archive is gone
    err = capsys.readouterr().err  # not a terminal: a line at the start and one at the end
    assert f"downloading {server.url('/cifar.tar.gz')}" in err and "downloaded cifar-10-python.tar.gz" in err
    again = load_cifar10()  # from the cache: the server is not asked again
    assert server.hits == ["/cifar.tar.gz"] and again.test_y.tolist() == splits.test_y.tolist()
    assert catalog.locate("cifar10") == catalog.Location(
        "cifar10", True, folder, "cache", sum(p.stat().st_size for p in cache_files())
    )


def test_unpacking_writes_only_the_expected_members(tmp_path, monkeypatch, server):
    """Path traversal, absolute names, links and unknown members are not written anywhere."""
    evil = []
    for name in ("../evil", "/tmp/evil-absolute", "cifar-10-batches-py/../../evil2", "cifar-10-batches-py/unknown"):
        info = tarfile.TarInfo(name)
        info.size = 4
        evil.append((info, b"evil"))
    link = tarfile.TarInfo("cifar-10-batches-py/batches.meta")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    evil.append((link, None))
    serve_cifar(monkeypatch, server, cifar_archive(tmp_path, evil))
    assert load_cifar10().sizes() == (90, 10, 10)
    folder = fetch.cache_root() / "cifar-10-batches-py"
    assert sorted(p.name for p in folder.iterdir()) == sorted(sources.CIFAR10_FILES)
    assert not any(p.is_symlink() for p in folder.iterdir())
    assert not list(tmp_path.rglob("evil*")) and not Path("/tmp/evil-absolute").exists()


def test_an_archive_without_the_batches_is_refused(tmp_path, monkeypatch, server):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("readme.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    serve_cifar(monkeypatch, server, buf.getvalue())
    with pytest.raises(DataError, match="lacks cifar-10-batches-py/data_batch_1: not the CIFAR-10 python archive"):
        load_cifar10()
    assert_nothing_cached()


def test_tiny_shakespeare_downloads_when_no_corpus_is_found(monkeypatch, server):
    serve_tiny(monkeypatch, server)
    task = tasks.get_task("lm-shakespeare", {"context": 32, "eval_tokens": 256})
    data = task.load(None, "cpu")
    path = fetch.cache_root() / "tiny-shakespeare" / sources.TINY_SHAKESPEARE_FILE
    assert server.hits == ["/input.txt"] and cache_files() == [path, fetch.cache_root() / fetch.STAMP_FILE]
    assert data.n_train == int(len(TEXT) * 0.9)
    record = {
        "corpus": "tiny-shakespeare",
        "file": str(path),
        "sha256": hashlib.sha256(TEXT).hexdigest(),
        "bytes": len(TEXT),
    }
    assert data.source == record
    _, artifacts = task.after_run(None, data, 0)  # what each run stores: the text it trained on
    assert artifacts["data"]["media_type"] == "application/json"
    assert json.loads(base64.b64decode(artifacts["data"]["data"])) == record
    task.load(None, "cpu")
    assert server.hits == ["/input.txt"]  # cached


def test_a_local_gutenberg_corpus_wins_over_the_download(tmp_path, monkeypatch, server):
    serve_tiny(monkeypatch, server)
    (tmp_path / "d" / "shakespeare").mkdir(parents=True)
    (tmp_path / "d" / "shakespeare" / "shakespeare.txt").write_bytes(TEXT[::-1])
    data = tasks.get_task("lm-shakespeare", {"context": 32}).load(str(tmp_path / "d"), "cpu")
    assert data.source["corpus"] == "shakespeare" and data.source["sha256"] == hashlib.sha256(TEXT[::-1]).hexdigest()
    assert server.hits == [] and cache_files() == []
    pinned = tasks.get_task("lm-shakespeare", {"context": 32, "corpus": "tiny-shakespeare"}).load(
        str(tmp_path / "d"), "cpu"
    )
    assert pinned.source["corpus"] == "tiny-shakespeare" and server.hits == ["/input.txt"]
    with pytest.raises(DataError, match="it has no download"):
        tasks.get_task("lm-shakespeare", {"corpus": "shakespeare"}).load(str(tmp_path), "cpu")


def test_a_corrupt_tiny_shakespeare_copy_is_refused(tmp_path, monkeypatch, server):
    serve_tiny(monkeypatch, server)
    (tmp_path / "tiny-shakespeare").mkdir()
    (tmp_path / "tiny-shakespeare" / sources.TINY_SHAKESPEARE_FILE).write_bytes(b"x" + TEXT)
    with pytest.raises(DataError, match="is corrupt: SHA-256"):
        text.load_shakespeare("tiny-shakespeare", str(tmp_path))


def test_fetch_into_a_data_dir(tmp_path, monkeypatch, server):
    """`search data fetch NAME --data-dir DIR` puts it in DIR/<folder>/, which runs then read."""
    serve_cifar(monkeypatch, server, cifar_archive(tmp_path))
    (tmp_path / "shared").mkdir()
    loc = catalog.fetch_data_set("cifar10", str(tmp_path / "shared"))
    assert loc.present and loc.directory == tmp_path / "shared" / "cifar-10-batches-py" and loc.origin == "--data-dir"
    assert cache_files() == [] and catalog.fetch_data_set("cifar10", str(tmp_path / "shared")) == loc
    assert server.hits == ["/cifar.tar.gz"]
    assert load_cifar10(str(tmp_path / "shared")).sizes() == (90, 10, 10)


# ------------------------------------------------------------------- failures leave nothing


def test_a_checksum_mismatch_leaves_nothing_and_says_so_in_one_line(tmp_path, monkeypatch, server):
    serve_cifar(monkeypatch, server, cifar_archive(tmp_path), sha256="0" * 64)
    with pytest.raises(DataError) as e:
        load_cifar10()
    assert "\n" not in str(e.value)
    assert str(e.value).startswith("downloaded cifar-10-python.tar.gz does not match its SHA-256; removed it")
    assert_nothing_cached()
    serve_tiny(monkeypatch, server, sha256="0" * 64)
    with pytest.raises(DataError, match="downloaded tiny-shakespeare.txt does not match its SHA-256"):
        text.load_shakespeare("auto", None)
    assert_nothing_cached()


@pytest.mark.parametrize("which", ["cifar10", "tiny-shakespeare"])
def test_an_interrupted_download_leaves_nothing(tmp_path, monkeypatch, server, which):
    """The server sends half the body it announced, then closes the connection."""
    server.mode = "short"
    if which == "cifar10":
        serve_cifar(monkeypatch, server, cifar_archive(tmp_path))
        start = "CIFAR-10 not found: put data_batch_1, "
    else:
        serve_tiny(monkeypatch, server)
        start = "Shakespeare corpus not found: put shakespeare.txt.gz"
    with pytest.raises(DataError) as e:
        load_cifar10() if which == "cifar10" else text.load_shakespeare("auto", None)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(start) and "interrupted: got " in msg and " bytes" in msg
    assert_nothing_cached()


def test_offline_leaves_nothing(monkeypatch, server):
    """Connection refused (as offline): one line naming the files and where they go."""
    url = f"http://127.0.0.1:{closed_port()}/c.tar.gz"
    monkeypatch.setattr(cifar10, "REMOTE", Remote("c.tar.gz", (url,), "0" * 64))
    with pytest.raises(DataError) as e:
        load_cifar10()
    msg = str(e.value)
    assert "\n" not in msg and "test_batch" in msg and str(fetch.cache_root() / "cifar-10-batches-py") in msg
    assert "download failed" in msg and "refused" in msg.lower()
    assert_nothing_cached()


def test_offline_through_the_cli_exits_2(tmp_path):
    """`search data fetch` in a child process, the address a closed port: exit 2, one line."""
    port = closed_port()
    script = (
        "import sys\n"
        "from tasks.datasets import sources\n"
        f"sources.TINY_SHAKESPEARE_REMOTE = sources.Remote('tiny-shakespeare.txt', "
        f"('http://127.0.0.1:{port}/input.txt',), '0' * 64)\n"
        "from search.cli import main\n"
        "sys.exit(main(['data', 'fetch', 'tiny-shakespeare']))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != fetch.ENV_DATA_DIR}
    env.update(PYTHONPATH=str(REPO), OMP_NUM_THREADS="1", XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("error: Tiny Shakespeare (char-rnn): download failed")
    assert "nothing was kept" in done.stderr
    assert not (tmp_path / "cache").exists() or list((tmp_path / "cache").rglob("*")) == []
