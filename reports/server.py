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

A request is answered only when its Host header names the address served (`served_hosts`:
the address itself; on a loopback address also localhost, 127.0.0.1 and ::1; on all
interfaces also this machine's names and addresses) or a host the user allowed
(`--allow-host`; `*` allows any). Anything else gets 403: otherwise a page on another
site could read the studies through DNS rebinding (its own name resolved to 127.0.0.1).
"""
from __future__ import annotations

import ipaddress
import re
import socket
import sys
from collections.abc import Iterable
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


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
ANY_HOST = "*"


def host_name(header: str | None) -> str | None:
    """The host of a Host header, lower case, without port or IPv6 brackets
    ("[::1]:8080" -> "::1", "Example.org" -> "example.org"); None when absent or empty."""
    if not header or not header.strip():
        return None
    h = header.strip().lower()
    if h.startswith("["):
        return h[1:h.index("]")] if "]" in h else h
    return h.rsplit(":", 1)[0] if h.count(":") == 1 else h


def served_hosts(host: str, allow: Iterable[str] = ()) -> frozenset[str]:
    """The Host names a server listening on `host` answers: `host`; on a loopback address
    the loopback names too; on a wildcard address (0.0.0.0, ::) also this machine's name,
    fully qualified name and their addresses; plus every name in `allow` (ANY_HOST: any)."""
    names = {host_name(host) or host}
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        ip = None
    if host == "localhost" or (ip is not None and (ip.is_loopback or ip.is_unspecified)):
        names |= set(LOOPBACK_NAMES)
    if ip is not None and ip.is_unspecified:
        for name in {socket.gethostname(), socket.getfqdn()}:
            names.add(name.lower())
            try:
                names |= set(socket.gethostbyname_ex(name)[2])
            except OSError:
                pass
    for a in allow:
        if a != ANY_HOST and (not host_name(a) or re.search(r"[\s/@?#]", a)):
            raise UserError(f"--allow-host takes a host name or address such as example.org or 10.0.0.5, got {a!r}")
        names.add(ANY_HOST if a == ANY_HOST else host_name(a))
    return frozenset(names)


def host_allowed(header: str | None, allowed: frozenset[str]) -> bool:
    return ANY_HOST in allowed or host_name(header) in allowed


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
        why = (f"this server does not answer for host {name!r}; start search serve with --allow-host {name} "
               "to allow it" if name else "a request needs a Host header")
        self._send(HTTPStatus.FORBIDDEN, _message_page("Host not served", why))
        return False

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


def make_server(store: Store, host: str = "127.0.0.1", port: int = 8080, quiet: bool = False,
                allow_hosts: Iterable[str] = ()) -> ThreadingHTTPServer:
    """A server (not yet serving) over `store`; port 0 picks a free port. It answers
    requests for the address served and the hosts in `allow_hosts` (`served_hosts`)."""
    attrs: dict[str, Any] = {"pages": Pages(store), "allowed_hosts": served_hosts(host, allow_hosts)}
    if quiet:
        attrs["log_message"] = lambda self, *a: None
    handler = type("BoundHandler", (Handler,), attrs)
    try:
        server = ThreadingHTTPServer((host, port), handler)
    except OSError as e:
        raise UserError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    server.daemon_threads = True
    return server
