"""The background worker for the GGUF model: one daemon thread, a bounded queue, created on first use.

A small local model takes seconds a message, so its jobs (a topic for the placeholder, optionally a
guarded summary) must never hold up ``build_context``, batch ingest or the interpreter's exit:

* the thread is a daemon and starts only when the first job arrives (nothing runs at import);
* the queue is bounded: when it is full, a new job is skipped and counted (``skipped``), since the
  message already has its instant extractive form and key-phrase topic;
* at exit, queued jobs are dropped and the job in progress gets ``EXIT_GRACE_S`` to finish, so
  llama.cpp is not torn down in the middle of a call. A script that adds hundreds of messages and
  ends exits at once.
"""

from __future__ import annotations

import atexit
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future

QUEUE_SIZE = 64
EXIT_GRACE_S = 5.0


class BackgroundWorker:
    """Runs jobs one at a time on a daemon thread; ``submit`` never blocks."""

    def __init__(self, maxsize: int = QUEUE_SIZE, name: str = "afm-background") -> None:
        self._queue: queue.Queue[tuple[Future[None], Callable[[], None]] | None] = queue.Queue(maxsize)
        self._name = name
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._idle = threading.Event()
        self._idle.set()
        self.skipped = 0

    def submit(self, job: Callable[[], None]) -> Future[None] | None:
        """Queue ``job``; ``None`` (and ``skipped`` counted) when the queue is full."""
        future: Future[None] = Future()
        self._start()
        try:
            self._queue.put_nowait((future, job))
        except queue.Full:
            with self._lock:
                self.skipped += 1
            return None
        return future

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
                atexit.register(self.shutdown)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            future, job = item
            if not future.set_running_or_notify_cancel():
                continue
            self._idle.clear()
            try:
                job()
            except BaseException as exc:  # recorded on the future; the worker carries on
                future.set_exception(exc)
            else:
                future.set_result(None)
            finally:
                self._idle.set()

    def shutdown(self, grace_s: float = EXIT_GRACE_S) -> None:
        """Drop queued jobs (their futures are cancelled), let the running one finish for ``grace_s``."""
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                item[0].cancel()
        try:
            self._queue.put_nowait(None)
        except queue.Full:
            pass
        self._idle.wait(grace_s)


_WORKER: BackgroundWorker | None = None
_WORKER_LOCK = threading.Lock()


def background_worker() -> BackgroundWorker:
    """The process's one worker (the model is shared and runs one job at a time anyway)."""
    global _WORKER
    with _WORKER_LOCK:
        if _WORKER is None:
            _WORKER = BackgroundWorker()
        return _WORKER
