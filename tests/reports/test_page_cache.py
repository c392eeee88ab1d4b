"""Pages kept per version, conditional requests, one build at a time (issue 33)."""

from __future__ import annotations

import gzip
import threading
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

from reports.page_cache import CachedPage, PageCache, accepts_gzip, http_time, not_modified

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
PAGE = CachedPage("v1", '"abc"', T0, b"<html>")


def test_if_none_match_decides():
    assert not_modified({"If-None-Match": '"abc"'}, PAGE)
    assert not_modified({"If-None-Match": '"x", W/"abc"'}, PAGE)  # a list; weak comparison
    assert not_modified({"If-None-Match": "*"}, PAGE)
    assert not not_modified({"If-None-Match": '"abd"'}, PAGE)
    assert not not_modified({"If-None-Match": "abc"}, PAGE)  # unquoted is another tag
    # present, it wins over a date that alone would say "not modified"
    assert not not_modified({"If-None-Match": '"old"', "If-Modified-Since": format_datetime(T0, usegmt=True)}, PAGE)


def test_if_modified_since():
    at = format_datetime(T0, usegmt=True)
    assert not_modified({"If-Modified-Since": at}, PAGE)
    assert not_modified({"If-Modified-Since": format_datetime(T0 + timedelta(hours=1), usegmt=True)}, PAGE)
    assert not not_modified({"If-Modified-Since": format_datetime(T0 - timedelta(seconds=1), usegmt=True)}, PAGE)
    assert not not_modified({"If-Modified-Since": "yesterday"}, PAGE)
    assert not not_modified({}, PAGE)


def test_http_time_is_whole_seconds_and_not_before_the_floor():
    t = T0 + timedelta(microseconds=999)
    assert http_time(t, T0 - timedelta(days=1)) == T0
    assert http_time(None, T0) == T0 and http_time(T0 - timedelta(days=1), T0) == T0
    assert PAGE.headers()["Last-Modified"] == "Fri, 02 Jan 2026 03:04:05 GMT"


def test_a_page_is_built_once_per_version():
    cache = PageCache(salt="s")
    built = []

    def build(etag):
        built.append(etag)
        return f"page {len(built)}"

    a = cache.get("study:x", "v1", T0, build)
    assert cache.get("study:x", "v1", T0, build) is a and a.body == b"page 1" and built == [a.etag]
    b = cache.get("study:x", "v2", T0, build)
    assert b.body == b"page 2" and b.etag != a.etag and cache.builds == 2
    assert cache.get("study:y", "v1", None, build).etag not in (a.etag, b.etag)  # another page
    assert PageCache(salt="t").etag("study:x", "v1") != a.etag  # a restarted server: new tags


def test_concurrent_requests_wait_for_one_build():
    cache = PageCache()
    calls = []
    start = threading.Barrier(12)

    def build(etag):
        calls.append(etag)
        time.sleep(0.3)
        return "slow page"

    got = []

    def request():
        start.wait()
        got.append(cache.get("study:x", "v1", T0, build))

    threads = [threading.Thread(target=request) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(got) == 12 and len({id(p) for p in got}) == 1


def test_accepts_gzip():
    for header in ("gzip", "deflate, gzip, br", "GZIP;q=0.5", "x-gzip", "*", "br, *;q=1"):
        assert accepts_gzip(header), header
    for header in (None, "", "identity", "br", "gzip;q=0", "gzip; q=0.000", "*, gzip;q=0", "gzip;q=nonsense"):
        assert not accepts_gzip(header), header


def test_a_kept_page_is_kept_gzipped_with_a_weak_tag():
    page = PageCache().get("study:x", "v1", T0, lambda etag: "<p>" + "row " * 1000)
    assert gzip.decompress(page.gzipped) == page.body and len(page.gzipped) < len(page.body) / 10
    weak = page.headers(gzipped=True)
    assert weak["ETag"] == "W/" + page.etag and weak["Vary"] == "Accept-Encoding"
    assert not_modified({"If-None-Match": weak["ETag"]}, page)  # the weak tag revalidates too


def test_callers_that_waited_take_the_page_built_meanwhile_whatever_their_version():
    """A study that changes faster than its page builds: twelve callers, each with a newer
    version, arrive during a build; they share the next page instead of queueing twelve."""
    cache = PageCache()
    calls = []

    def build(etag):
        calls.append(etag)
        time.sleep(0.3)
        return f"page {len(calls)}"

    first = threading.Thread(target=lambda: cache.get("study:x", "v0", T0, build))
    first.start()
    time.sleep(0.05)  # the first build is under way
    got = []
    threads = [
        threading.Thread(target=lambda i=i: got.append(cache.get("study:x", f"v{i}", T0, build))) for i in range(1, 13)
    ]
    for t in threads:
        t.start()
    for t in threads + [first]:
        t.join()
    assert len(calls) == 1 and len(got) == 12 and {p.body for p in got} == {b"page 1"}
    later = cache.get("study:x", "v13", T0, build)  # asked after: built anew
    assert later.body == b"page 2" and len(calls) == 2


def test_during_a_rebuild_callers_get_the_page_kept_before():
    """Stale while it revalidates: one rebuild runs, the others are answered at once."""
    cache = PageCache()
    old = cache.get("study:x", "v0", T0, lambda etag: "old page")
    started, release = threading.Event(), threading.Event()

    def slow(etag):
        started.set()
        release.wait(5)
        return "new page"

    builder = threading.Thread(target=lambda: cache.get("study:x", "v1", T0, slow))
    builder.start()
    started.wait(5)
    t = time.perf_counter()
    during = [cache.get("study:x", f"v{i}", T0, lambda etag: "never built") for i in range(2, 6)]
    assert time.perf_counter() - t < 1 and all(p is old for p in during)
    release.set()
    builder.join()
    assert cache.get("study:x", "v1", T0, lambda etag: "never built").body == b"new page"
    assert cache.builds == 2
