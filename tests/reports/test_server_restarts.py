"""`search serve` while its database restarts: the kept pages answer 200, a page that must
be built answers 503 "Database unavailable" (not a traceback), and all answer 200 again
once the database is back, without restarting the server. On a private PostgreSQL server
(tests/storage/pg_server.py)."""

from __future__ import annotations

import threading
import time

import pytest

from reports.server import VERSION_TTL_S, make_server, trial_filename
from reports.site import study_filename
from storage import Store
from tests.reports.test_server import TASK, get, result
from tests.storage.pg_server import SKIP_REASON, PgServer, server_bin

pytestmark = pytest.mark.skipif(server_bin() is None, reason=SKIP_REASON)


@pytest.fixture
def pg():
    server = PgServer()
    yield server
    server.close()


def test_pages_while_the_database_restarts(pg):
    store = Store(pg.url)  # as `search serve` opens it: no wait, a request never hangs
    store.create_or_load_study("s", families=["hourglass"], **TASK)
    for i in range(2):
        n = store.add_trial(
            "s", family="hourglass", config={"d_z": 70 + i, "d_h": 8, "L": 1}, params=9000 + i, seeds=[1]
        )
        store.finish_trial("s", n, result(n, [1], 14.0 + i))
    server = make_server(store, "127.0.0.1", 0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        assert get(base)[0] == 200 and get(base + study_filename("s"))[0] == 200  # built and kept
        pg.stop("immediate")
        time.sleep(VERSION_TTL_S + 0.1)  # the versions read before are stale: the server must ask again
        code, index = get(base)
        assert code == 200 and study_filename("s") in index
        assert get(base + study_filename("s"))[0] == 200
        code, page = get(base + trial_filename("s", 1))
        assert code == 503 and "Database unavailable" in page and "Traceback" not in page
        pg.start()
        code, page = get(base + trial_filename("s", 1))
        assert code == 200 and "Trial #1 of" in page
        assert get(base)[0] == 200
    finally:
        server.shutdown()
        server.server_close()
        store.close()
