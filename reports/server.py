"""`search serve`: a read-only web server over a study database.

Pages are built from the database, so they show a study as it runs:

    /                       the study list (pick studies to compare)
    /study-<slug>.html      a study's page, as the static one; follows the study while trials run
    /trial-<slug>-<n>.html  one trial: configuration, metrics, per-epoch learning curves
    /compare.html?study=A&study=B   several studies' fronts on one plot
                            (&predict_at=1M,10M: their laws' predictions marked there)
    /weights-<slug>-<n>-<k>-<r>.safetensors   a kept weights file of trial n (k: 0 for the
                            search's run r, else its retraining k), its sha256 checked first
    /plotly.min.js          plotly's JavaScript, served locally (no network needed)
    /changed?page=P&etag=E  "changed" or "unchanged": has page P moved on from the version
                            whose ETag is E (what a live study page asks every 5 s)

Polling cannot sink it (issue 33). The study pages and the index are built once per
version of their studies (`Store.study_versions`: one aggregate query, no trial read; at
most one per `VERSION_TTL_S`, shared by the requests meanwhile) and kept
(`reports/page_cache.py`): answered with ETag and Last-Modified, 304 to a conditional
request while unchanged, and one build at a time per page (the requests arriving meanwhile
get the page kept before; before the first build, they wait for it). A study page with running trials asks
/changed instead of reloading itself,
so an open tab costs one cheap request per 5 s until something changes. Trial and compare
pages are built per request.

While the database is unreachable (a restart, a failover), the kept study pages and index
are still answered, at the versions read last; a page that must be built answers 503
"Database unavailable" (with Retry-After), and each is served again once the database is
back, without a restart.

Only GET and HEAD are answered (405 otherwise), and the handlers call only the store's
reading methods, so nothing served can change the database. The standard library's
threading HTTP server is enough for a handful of researchers on one machine; it binds to
127.0.0.1 unless told otherwise.

A request is answered only when its Host header names the address served (`served_hosts`:
the address itself; on a loopback address also localhost, 127.0.0.1 and ::1; on all
interfaces also this machine's names and addresses) or a host the user allowed
(`--allow-host`; `*` allows any). Anything else gets 403: otherwise a page on another
site could read the studies through DNS rebinding (its own name resolved to 127.0.0.1).
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from plotly.offline import get_plotlyjs

from core.errors import StorageUnavailable, UserError, one_line
from reports.hosts import host_allowed, host_name, served_hosts
from reports.html import PLOTLY_JS, esc, page
from reports.kept import WEIGHTS_ARTIFACT, store_kept
from reports.live import compare_page, trial_page
from reports.page_cache import CachedPage, PageCache, accepts_gzip, not_modified
from reports.samples import store_samples
from reports.site import index_page, slugify, study_filename, study_page
from reports.tables import status_counts
from storage import Store
from storage.records import StudyVersion

REFRESH_S = 5  # a page of a study with running trials asks whether it changed this often
VERSION_TTL_S = 1.0  # the studies' versions are read at most this often (pages lag by as much)
RETRY_AFTER_S = 5  # a 503 (database unavailable) asks the client to come back after this long
_STUDY = re.compile(r"^/study-(?P<slug>[a-z0-9._-]+)\.html$")
_TRIAL = re.compile(r"^/trial-(?P<slug>[a-z0-9._-]+)-(?P<number>\d+)\.html$")
_WEIGHTS = re.compile(
    r"^/weights-(?P<slug>[a-z0-9._-]+)-(?P<number>\d+)-(?P<retraining>\d+)-(?P<repeat>\d+)"
    r"\.safetensors$"
)
# (store URL, key) -> the file's bytes: how the server reads a kept file (`search serve`
# passes one over search/artifacts; without it, no file is offered).
ReadFile = Callable[[str, str], bytes]


class FileMismatch(Exception):
    """A kept file whose bytes differ from its record (size or sha256): never served."""


def trial_filename(study: str, number: int | str) -> str:
    return f"trial-{slugify(study)}-{int(number)}.html"


def weights_filename(study: str, number: int, retraining: int, repeat: int) -> str:
    """The download address of a kept weights file (retraining 0: the search's run)."""
    return f"weights-{slugify(study)}-{int(number)}-{int(retraining)}-{int(repeat)}.safetensors"


class Pages:
    """The pages of one database: study pages and the index kept per version of their
    studies (`PageCache`), the others built on each call."""

    def __init__(self, store: Store, read_file: ReadFile | None = None) -> None:
        self.store = store
        self.read_file = read_file
        self.download = weights_filename if read_file is not None else None
        self.cache = PageCache()
        self._plotly: bytes | None = None
        self._versions: dict[str, StudyVersion] = {}
        self._versions_at = -float("inf")
        self._versions_read = False
        self._versions_lock = threading.Lock()

    def plotly_js(self) -> bytes:
        if self._plotly is None:
            self._plotly = get_plotlyjs().encode("utf-8")
        return self._plotly

    def versions(self) -> dict[str, StudyVersion]:
        """Every study's version, read at most once per VERSION_TTL_S (the requests that
        come while it is read wait for that one read). While the database is unreachable,
        the versions read last (so the kept pages answer as they were); before any was
        read, `StorageUnavailable`."""
        with self._versions_lock:
            if time.monotonic() - self._versions_at >= VERSION_TTL_S:
                try:
                    self._versions = self.store.study_versions()
                except StorageUnavailable:
                    if not self._versions_read:
                        raise
                else:
                    self._versions_at = time.monotonic()
                    self._versions_read = True
            return self._versions

    def _study_named(self, slug: str) -> str:
        for name in self.versions():
            if slugify(name) == slug:
                return name
        for s in self.store.list_studies():  # created within the last VERSION_TTL_S
            if slugify(s.name) == slug:
                return s.name
        raise LookupError(f"no study at {slug!r}")

    def _index_version(self) -> tuple[str, datetime | None]:
        versions = self.versions()
        latest = max((v.changed_at for v in versions.values() if v.changed_at is not None), default=None)
        return "\n".join(f"{n}\0{v.version}" for n, v in sorted(versions.items())), latest

    def index(self) -> CachedPage:
        version, changed_at = self._index_version()
        return self.cache.get("index", version, changed_at, lambda etag: self._build_index())

    def _build_index(self) -> str:
        studies = [(self.store.get_study(s.name), self.store.trials_frame(s.name)) for s in self.store.list_studies()]
        return index_page(studies, [study_filename(r.name) for r, _ in studies], compare="compare.html")

    def _study_version(self, name: str) -> StudyVersion:
        v = self.versions().get(name)
        return v if v is not None else self.store.study_versions(name)[name]

    def study(self, slug: str) -> CachedPage:
        name = self._study_named(slug)
        v = self._study_version(name)
        return self.cache.get(f"study:{name}", v.version, v.changed_at, lambda etag: self._build_study(name, etag))

    def _build_study(self, name: str, etag: str) -> str:
        record, df = self.store.get_study(name), self.store.trials_frame(name)
        running = status_counts(df).get("running", 0) > 0
        return study_page(
            record,
            df,
            store_samples(self.store),
            trial_link=lambda n: trial_filename(name, n),
            kept=store_kept(self.store, self.download),
            refresh_s=REFRESH_S if running else None,
            poll_url=f"changed?page={study_filename(name)}&etag={etag.strip(chr(34))}",
        )

    def changed(self, page_name: str, etag: str) -> bool:
        """Whether page `page_name` (a study page or the index) has moved on from the
        version whose ETag (unquoted) is `etag`; a page that is gone has."""
        try:
            if page_name in ("", "index.html"):
                key, version = "index", self._index_version()[0]
            elif m := _STUDY.match("/" + page_name):
                name = self._study_named(m["slug"])
                key, version = f"study:{name}", self._study_version(name).version
            else:
                raise UserError(f"no page {page_name!r} answers 'changed since?'; study pages and the index do")
        except LookupError:
            return True
        return self.cache.etag(key, version).strip('"') != etag.strip('"')

    def trial(self, slug: str, number: int) -> str:
        name = self._study_named(slug)
        found = [t for t in self.store.trials(name) if t.number == number]
        if not found:
            raise LookupError(f"study {name!r} has no trial {number}")
        trial = found[0]
        return trial_page(
            self.store.get_study(name),
            trial,
            self.store.epochs(name, number),
            study_filename(name),
            refresh_s=REFRESH_S if trial.status == "running" else None,
            weights=self.store.artifacts(name, number, WEIGHTS_ARTIFACT),
            retrainings=(again := self.store.retrainings(name, [number])),
            download=self.download,
            retrained_epochs={r.number: self.store.retraining_epochs(name, number, r.number) for r in again},
        )

    def weights(self, slug: str, number: int, retraining: int, repeat: int) -> tuple[bytes, str]:
        """A kept weights file and its download name; LookupError when there is none to
        give, FileMismatch when its bytes differ from the record."""
        import hashlib

        name = self._study_named(slug)
        try:
            if retraining == 0:
                rows = [a for a in self.store.artifacts(name, number, WEIGHTS_ARTIFACT) if a["repeat"] == repeat]
            else:
                rows = [
                    a
                    for r in self.store.retrainings(name, [number])
                    if r.number == retraining
                    for run in r.runs
                    if run["repeat"] == repeat
                    for a in run["artifacts"]
                    if a["name"] == WEIGHTS_ARTIFACT
                ]
        except StorageUnavailable:
            raise
        except UserError as e:  # no such trial
            raise LookupError(str(e)) from None
        if not rows or not rows[0].get("store_key"):
            raise LookupError(
                f"trial {number} of {name!r} has no kept weights for run {repeat}"
                + (f" of retraining {retraining}" if retraining else "")
            )
        a = rows[0]
        if a.get("removed_at") is not None:
            raise LookupError(
                f"the weights of trial {number} of {name!r}, run {repeat}, were removed "
                "(the trial fell off its family's front)"
            )
        if self.read_file is None:
            raise LookupError("this server offers no files (started without its artifact store)")
        try:
            data = self.read_file(a["store"], a["store_key"])
        except Exception as e:  # noqa: BLE001 - a missing file or an unreachable store: nothing to give
            raise LookupError(f"cannot read the weights of trial {number}: {one_line(e)}") from None
        if len(data) != a["size"] or hashlib.sha256(data).hexdigest() != a["sha256"]:
            raise FileMismatch(
                f"the weights file of trial {number} of {name!r}, run {repeat}, differs from its "
                "record (size or sha256): not served"
            )
        return data, f"{slugify(name)}-trial{number}" + (
            f"-retraining{retraining}" if retraining else ""
        ) + f"-run{repeat}.safetensors"

    def compare(self, names: list[str], predict_at: str = "") -> str:
        """The compare page; `predict_at` (the query's comma list, "" for none) marks the
        fronts' predicted values at those budgets (UserError for bad ones: a 400 page)."""
        from core.budget import parse_targets

        studies = [(self.store.get_study(n), self.store.trials_frame(n)) for n in names]
        targets = (
            parse_targets(predict_at, max(r.budget for r, _ in studies), "predict_at")
            if predict_at.strip() and studies
            else ()
        )
        return compare_page(studies, predict_at=targets)


def _message_page(title: str, message: str) -> str:
    return page(
        title,
        f'<nav><a href="index.html">← all studies</a></nav><h1>{esc(title)}</h1><p class="empty">{esc(message)}</p>',
        plotly=False,
    )


class Handler(BaseHTTPRequestHandler):
    pages: Pages  # set on the class that `make_server` builds
    allowed_hosts: frozenset[str]  # likewise: `served_hosts` of the address served
    server_version = "search-serve"

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        if self._host_ok():
            self._answer(send_body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        if self._host_ok():
            self._answer(send_body=False)

    def _host_ok(self) -> bool:
        """Refuse (403) a request whose Host header is not one this server answers."""
        header = self.headers.get("Host")
        if host_allowed(header, self.allowed_hosts):
            return True
        name = host_name(header)
        why = (
            f"this server does not answer for host {name!r}; start search serve with --allow-host {name} to allow it"
            if name
            else "a request needs a Host header"
        )
        self._send(HTTPStatus.FORBIDDEN, _message_page("Host not served", why))
        return False

    def _refuse(self) -> None:
        self._send(
            HTTPStatus.METHOD_NOT_ALLOWED,
            _message_page("Read-only", "this server only reads the database"),
            extra={"Allow": "GET, HEAD"},
        )

    do_POST = do_PUT = do_DELETE = do_PATCH = _refuse  # noqa: N815

    def _answer(self, send_body: bool) -> None:
        url = urlsplit(self.path)
        path = unquote(url.path)
        try:
            if path in ("/", "/index.html"):
                return self._send_cached(self.pages.index(), send_body)
            if m := _STUDY.match(path):
                return self._send_cached(self.pages.study(m["slug"]), send_body)
            if path == "/changed":
                query = parse_qs(url.query)
                moved = self.pages.changed(query.get("page", [""])[0], query.get("etag", [""])[0])
                status, body, kind = HTTPStatus.OK, "changed" if moved else "unchanged", "text/plain"
            elif path == f"/{PLOTLY_JS}":
                status, body, kind = HTTPStatus.OK, self.pages.plotly_js(), "application/javascript"
            elif path == "/compare.html":
                query = parse_qs(url.query)
                body = self.pages.compare(query.get("study", []), query.get("predict_at", [""])[0])
                status, kind = HTTPStatus.OK, "text/html"
            elif m := _TRIAL.match(path):
                status, body, kind = HTTPStatus.OK, self.pages.trial(m["slug"], int(m["number"])), "text/html"
            elif m := _WEIGHTS.match(path):
                body, filename = self.pages.weights(m["slug"], int(m["number"]), int(m["retraining"]), int(m["repeat"]))
                return self._send(
                    HTTPStatus.OK,
                    body,
                    "application/octet-stream",
                    send_body=send_body,
                    extra={"Content-Disposition": f'attachment; filename="{filename}"'},
                )
            else:
                raise LookupError(f"nothing at {path}")
        except LookupError as e:
            status, body, kind = HTTPStatus.NOT_FOUND, _message_page("Not found", str(e)), "text/html"
        except FileMismatch as e:
            status, body, kind = HTTPStatus.INTERNAL_SERVER_ERROR, _message_page("File differs", str(e)), "text/html"
        except StorageUnavailable as e:  # before UserError, its base: the database is away, not the request wrong
            page_ = _message_page(
                "Database unavailable",
                f"the database cannot be reached now ({e}); the pages "
                "already built are still served, and this one will be when it is back",
            )
            return self._send(
                HTTPStatus.SERVICE_UNAVAILABLE, page_, send_body=send_body, extra={"Retry-After": str(RETRY_AFTER_S)}
            )
        except UserError as e:
            status, body, kind = HTTPStatus.BAD_REQUEST, _message_page("Cannot show this", str(e)), "text/html"
        self._send(status, body, kind, send_body=send_body)

    def _send_cached(self, page: CachedPage, send_body: bool) -> None:
        """A kept page: 304 with its validators when the request's still match, else the
        page (gzip-compressed when the client accepts it)."""
        gzipped = accepts_gzip(self.headers.get("Accept-Encoding"))
        headers = page.headers(gzipped)
        if not_modified(self.headers, page):
            self.send_response(HTTPStatus.NOT_MODIFIED)
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            return
        if gzipped:
            headers["Content-Encoding"] = "gzip"
        self._send(HTTPStatus.OK, page.gzipped if gzipped else page.body, send_body=send_body, extra=headers)

    def _send(
        self,
        status: HTTPStatus,
        body: str | bytes,
        kind: str = "text/html",
        send_body: bool = True,
        extra: dict[str, str] | None = None,
    ) -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body
        headers = {"Cache-Control": "no-store", **(extra or {})}
        self.send_response(status)
        self.send_header("Content-Type", kind if kind == "application/octet-stream" else f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        if send_body:
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # one line per request on stderr
        sys.stderr.write(f"{self.address_string()} {format % args}\n")


class Server(ThreadingHTTPServer):
    """The standard threading server with a longer queue of connections waiting to be
    accepted: with socketserver's default of 5, the sixth of many pollers connecting at
    once is dropped and its client tries again after a second."""

    request_queue_size = 128


def make_server(
    store: Store,
    host: str = "127.0.0.1",
    port: int = 8080,
    quiet: bool = False,
    allow_hosts: Iterable[str] = (),
    read_file: ReadFile | None = None,
) -> ThreadingHTTPServer:
    """A server (not yet serving) over `store`; port 0 picks a free port. It answers
    requests for the address served and the hosts in `allow_hosts` (`served_hosts`), and
    offers the kept weights files for download when given `read_file`."""
    attrs: dict[str, Any] = {"pages": Pages(store, read_file), "allowed_hosts": served_hosts(host, allow_hosts)}
    if quiet:
        attrs["log_message"] = lambda self, *a: None
    handler = type("BoundHandler", (Handler,), attrs)
    try:
        server = Server((host, port), handler)
    except OSError as e:
        raise UserError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    server.daemon_threads = True
    return server
