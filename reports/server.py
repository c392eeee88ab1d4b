"""`search serve`: a read-only web server over a study database.

Pages are rebuilt from the database on every request, so they show a study as it runs:

    /                       the study list (pick studies to compare)
    /study-<slug>.html      a study's page, as the static one; reloads itself while trials run
    /trial-<slug>-<n>.html  one trial: configuration, metrics, per-epoch learning curves
    /compare.html?study=A&study=B   several studies' fronts on one plot
    /plotly.min.js          plotly's JavaScript, served locally (no network needed)

Only GET and HEAD are answered (405 otherwise), and the handlers call only the store's
reading methods, so nothing served can change the database. The standard library's
threading HTTP server is enough for a handful of researchers on one machine; it binds to
127.0.0.1 unless told otherwise.
"""
from __future__ import annotations

import re
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from plotly.offline import get_plotlyjs

from core.errors import UserError
from reports.html import PLOTLY_JS, esc, page
from reports.live import compare_page, trial_page
from reports.site import index_page, slugify, store_samples, study_filename, study_page
from reports.tables import status_counts
from storage import Store

REFRESH_S = 5  # a page of a study with running trials reloads this often
_STUDY = re.compile(r"^/study-(?P<slug>[a-z0-9._-]+)\.html$")
_TRIAL = re.compile(r"^/trial-(?P<slug>[a-z0-9._-]+)-(?P<number>\d+)\.html$")


def trial_filename(study: str, number: int | str) -> str:
    return f"trial-{slugify(study)}-{int(number)}.html"


class Pages:
    """The pages of one database, rebuilt on each call."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._plotly: bytes | None = None

    def plotly_js(self) -> bytes:
        if self._plotly is None:
            self._plotly = get_plotlyjs().encode("utf-8")
        return self._plotly

    def _study_named(self, slug: str) -> str:
        for s in self.store.list_studies():
            if slugify(s.name) == slug:
                return s.name
        raise LookupError(f"no study at {slug!r}")

    def index(self) -> str:
        studies = [(self.store.get_study(s.name), self.store.trials_frame(s.name)) for s in self.store.list_studies()]
        return index_page(studies, [study_filename(r.name) for r, _ in studies], compare="compare.html")

    def study(self, slug: str) -> str:
        name = self._study_named(slug)
        record, df = self.store.get_study(name), self.store.trials_frame(name)
        running = status_counts(df).get("running", 0) > 0
        return study_page(record, df, store_samples(self.store),
                          trial_link=lambda n: trial_filename(name, n), refresh_s=REFRESH_S if running else None)

    def trial(self, slug: str, number: int) -> str:
        name = self._study_named(slug)
        found = [t for t in self.store.trials(name) if t.number == number]
        if not found:
            raise LookupError(f"study {name!r} has no trial {number}")
        trial = found[0]
        return trial_page(self.store.get_study(name), trial, self.store.epochs(name, number), study_filename(name),
                          refresh_s=REFRESH_S if trial.status == "running" else None)

    def compare(self, names: list[str]) -> str:
        return compare_page([(self.store.get_study(n), self.store.trials_frame(n)) for n in names])


def _message_page(title: str, message: str) -> str:
    return page(title, f'<nav><a href="index.html">← all studies</a></nav><h1>{esc(title)}</h1>'
                       f'<p class="empty">{esc(message)}</p>', plotly=False)


class Handler(BaseHTTPRequestHandler):
    pages: Pages  # set on the class that `make_server` builds
    server_version = "search-serve"

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self._answer(send_body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(send_body=False)

    def _refuse(self) -> None:
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, _message_page("Read-only", "this server only reads the database"),
                   extra={"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_DELETE = do_PATCH = _refuse  # noqa: N815

    def _answer(self, send_body: bool) -> None:
        url = urlsplit(self.path)
        path = unquote(url.path)
        try:
            if path in ("/", "/index.html"):
                status, body, kind = HTTPStatus.OK, self.pages.index(), "text/html"
            elif path == f"/{PLOTLY_JS}":
                status, body, kind = HTTPStatus.OK, self.pages.plotly_js(), "application/javascript"
            elif path == "/compare.html":
                status, body, kind = HTTPStatus.OK, self.pages.compare(parse_qs(url.query).get("study", [])), "text/html"
            elif m := _STUDY.match(path):
                status, body, kind = HTTPStatus.OK, self.pages.study(m["slug"]), "text/html"
            elif m := _TRIAL.match(path):
                status, body, kind = HTTPStatus.OK, self.pages.trial(m["slug"], int(m["number"])), "text/html"
            else:
                raise LookupError(f"nothing at {path}")
        except LookupError as e:
            status, body, kind = HTTPStatus.NOT_FOUND, _message_page("Not found", str(e)), "text/html"
        except UserError as e:
            status, body, kind = HTTPStatus.BAD_REQUEST, _message_page("Cannot show this", str(e)), "text/html"
        self._send(status, body, kind, send_body=send_body)

    def _send(self, status: HTTPStatus, body: str | bytes, kind: str = "text/html", send_body: bool = True,
              extra: dict[str, str] | None = None) -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if send_body:
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # one line per request on stderr
        sys.stderr.write(f"{self.address_string()} {format % args}\n")


def make_server(store: Store, host: str = "127.0.0.1", port: int = 8080, quiet: bool = False) -> ThreadingHTTPServer:
    """A server (not yet serving) over `store`; port 0 picks a free port."""
    attrs: dict[str, Any] = {"pages": Pages(store)}
    if quiet:
        attrs["log_message"] = lambda self, *a: None
    handler = type("BoundHandler", (Handler,), attrs)
    try:
        server = ThreadingHTTPServer((host, port), handler)
    except OSError as e:
        raise UserError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    server.daemon_threads = True
    return server
