"""A TCP proxy between a search and its PostgreSQL server that cuts connections at chosen
moments (the database restart tests): after a COMMIT has reached the server and been
answered, the answer is dropped and both sides are closed, so the client cannot know
whether its transaction committed; or at once, whatever is in flight.

It runs an asyncio loop in a daemon thread: `CuttingProxy(port).start()` listens on
127.0.0.1:`proxy.port`; `stop()` ends it. Which COMMITs are cut is drawn from a seeded
random generator (`p_commit`), up to `max_cuts`; `cut_all()` closes every open
connection now.
"""

from __future__ import annotations

import asyncio
import random
import threading

COMMIT = b"COMMIT"


class CuttingProxy:
    def __init__(self, target_port: int, *, p_commit: float = 0.0, max_cuts: int = 0, seed: int = 0) -> None:
        self.target_port, self.p_commit, self.max_cuts = target_port, p_commit, max_cuts
        self.rng = random.Random(seed)
        self.port = 0
        self.commits = 0  # COMMITs seen
        self.commit_cuts = 0  # connections cut with a COMMIT's answer dropped
        self.other_cuts = 0  # connections cut by cut_all()
        self._loop = asyncio.new_event_loop()
        self._pairs: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cutting-proxy", daemon=True)

    @property
    def cuts(self) -> int:
        return self.commit_cuts + self.other_cuts

    def start(self) -> CuttingProxy:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the proxy did not start")
        return self

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    def cut_all(self) -> int:
        """Close every open connection now; return how many were cut."""
        return asyncio.run_coroutine_threadsafe(self._cut_all(), self._loop).result(timeout=10)

    # -- inside the loop ---------------------------------------------------------------
    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()

    async def _cut_all(self) -> int:
        pairs = list(self._pairs)
        for client, upstream in pairs:
            _close(client, upstream)
        self.other_cuts += len(pairs)
        return len(pairs)

    async def _serve(self, c_reader: asyncio.StreamReader, c_writer: asyncio.StreamWriter) -> None:
        try:
            s_reader, s_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            c_writer.close()
            return
        pair = (c_writer, s_writer)
        self._pairs.add(pair)
        drop_answer = asyncio.Event()  # set: the server's next bytes are the answer to a cut COMMIT
        try:
            await asyncio.gather(
                self._upstream(c_reader, s_writer, pair, drop_answer),
                self._downstream(s_reader, c_writer, pair, drop_answer),
            )
        finally:
            self._pairs.discard(pair)
            _close(*pair)

    async def _upstream(self, reader, writer, pair, drop_answer: asyncio.Event) -> None:
        while data := await reader.read(65536):
            if COMMIT in data:
                self.commits += 1
                if self.commit_cuts < self.max_cuts and self.rng.random() < self.p_commit:
                    drop_answer.set()
            writer.write(data)
            await writer.drain()
        _close(*pair)

    async def _downstream(self, reader, writer, pair, drop_answer: asyncio.Event) -> None:
        while data := await reader.read(65536):
            if drop_answer.is_set():  # the COMMIT was carried out and answered: the client never hears it
                self.commit_cuts += 1
                break
            writer.write(data)
            await writer.drain()
        _close(*pair)


def _close(*writers: asyncio.StreamWriter) -> None:
    for w in writers:
        try:
            w.transport.abort()
        except Exception:  # noqa: BLE001 - already closed
            pass
