"""Pages built once per version of what they show (issue 33), for `search serve`.

A page is kept with the version it was built from (`Store.study_versions`), its ETag and
its Last-Modified time. While the version holds, every request gets the kept bytes, and a
conditional request (If-None-Match, If-Modified-Since; RFC 9110 section 13) a 304 with no
body. Only one build of a page runs at a time (a lock per page): requests that arrive
meanwhile get the page kept before, or, when there is none yet, wait for the build. The
page is kept gzip-compressed too, for the clients that accept it (every browser).

Last-Modified has whole seconds and moves with stored times only (an interrupted trial
changes none), so a client sending If-Modified-Since alone can miss a change; browsers
send the ETag too, which decides.
"""

from __future__ import annotations

import gzip
import hashlib
import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime


@dataclass(frozen=True)
class CachedPage:
    version: str
    etag: str  # quoted, as sent in the ETag header
    last_modified: datetime  # UTC, whole seconds
    body: bytes
    gzipped: bytes = b""  # the body gzip-compressed (once, when kept)

    def headers(self, gzipped: bool = False) -> dict[str, str]:
        """The validators of this page (of its gzip encoding: a weak ETag, as nginx
        sends for a body it compresses), and "revalidate every time" (no-cache)."""
        return {
            "ETag": f"W/{self.etag}" if gzipped else self.etag,
            "Last-Modified": format_datetime(self.last_modified, usegmt=True),
            "Cache-Control": "no-cache",
            "Vary": "Accept-Encoding",
        }


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether an Accept-Encoding header allows gzip: listed ("gzip", "x-gzip", else "*")
    with a weight above 0 (RFC 9110 12.5.3)."""
    weights: dict[str, float] = {}
    for part in (accept_encoding or "").split(","):
        coding, *params = part.split(";")
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        weights[coding.strip().lower()] = q
    for coding in ("gzip", "x-gzip", "*"):
        if coding in weights:
            return weights[coding] > 0
    return False


def http_time(t: datetime | None, floor: datetime) -> datetime:
    """`t` (or `floor` when None or earlier) in UTC, cut to whole seconds as HTTP dates are."""
    t = floor if t is None else max(t.astimezone(UTC), floor)
    return t.replace(microsecond=0)


def not_modified(request: Mapping[str, str], page: CachedPage) -> bool:
    """Whether a request's validators still match `page` (answer 304).

    If-None-Match decides when present: a match of any listed tag (weak comparison, as
    RFC 9110 13.1.2 asks for GET) or "*". Otherwise If-Modified-Since: the page has not
    changed after that date. A header that cannot be read counts as absent."""
    tags = request.get("If-None-Match")
    if tags is not None:
        listed = {t.strip().removeprefix("W/") for t in tags.split(",")}
        return "*" in listed or page.etag in listed
    since = request.get("If-Modified-Since")
    if since is None:
        return False
    try:
        when = parsedate_to_datetime(since)
    except (TypeError, ValueError, IndexError):
        return False
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return page.last_modified <= when


class PageCache:
    """Pages by key (e.g. "study:<name>"), each rebuilt only when its version changes."""

    def __init__(self, salt: str | None = None) -> None:
        # A new salt per server: a restarted server (maybe newer code) never sends old tags.
        self.salt = salt if salt is not None else secrets.token_hex(8)
        self.started = http_time(datetime.now(UTC), datetime.min.replace(tzinfo=UTC))
        self._pages: dict[str, CachedPage] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._built: dict[str, int] = {}  # builds finished per key
        self._guard = threading.Lock()
        self.builds = 0  # pages built so far (tests and benchmarks read it)

    def etag(self, key: str, version: str) -> str:
        """The quoted ETag of page `key` at `version`."""
        digest = hashlib.sha256(f"{self.salt}\0{key}\0{version}".encode()).hexdigest()[:32]
        return f'"{digest}"'

    def _lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    def get(self, key: str, version: str, changed_at: datetime | None, build: Callable[[str], str]) -> CachedPage:
        """The page `key` at `version`: the kept one, or `build(etag)` (its HTML text),
        one build per key at a time.

        While a page is being rebuilt, other callers get the page kept before (stale while
        it revalidates: a study that changes faster than its page builds would otherwise
        hold every request for a build). Only when there is no page yet do they wait for
        the first build, and get it whatever their version: it was read from the database
        while they asked."""
        page = self._pages.get(key)
        if page is not None and page.version == version:
            return page
        lock = self._lock(key)
        if page is not None:
            if not lock.acquire(blocking=False):
                return page  # a newer one is being built: this one meanwhile
        else:
            seen = self._built.get(key, 0)
            lock.acquire()
            if self._built.get(key, 0) > seen:  # the first build, which this caller waited for
                lock.release()
                return self._pages[key]
        try:
            page = self._pages.get(key)
            if page is not None and page.version == version:
                return page
            etag = self.etag(key, version)
            body = build(etag).encode("utf-8")
            page = CachedPage(
                version, etag, http_time(changed_at, self.started), body, gzip.compress(body, compresslevel=5, mtime=0)
            )
            self._pages[key] = page
            self._built[key] = self._built.get(key, 0) + 1
            self.builds += 1
            return page
        finally:
            lock.release()
