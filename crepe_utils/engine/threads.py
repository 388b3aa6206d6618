"""Cores and threads: how many a run may use, torch's thread counts, and work started in a thread
that computes like the thread that started it (same CUDA device, its own torch thread count)."""
from __future__ import annotations

import contextlib
import os
import threading


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def threads_beside_workers(device, num_workers: int) -> int | None:
    """Torch's intra-op threads for encoding crops on the CPU while ``num_workers`` crop workers run:
    the cores they leave free (at least one), or None to keep torch's setting (a GPU, no workers, or
    already few enough). Idle OpenMP threads spin-wait between operations, so a thread per core in
    the main process takes from the workers the CPU time they need to decode."""
    import torch
    if device.type != "cpu" or num_workers <= 0:
        return None
    threads = max(1, available_cores() - int(num_workers))
    return threads if threads < torch.get_num_threads() else None


@contextlib.contextmanager
def torch_threads(threads: int | None):
    """Run the block with ``threads`` intra-op threads (None: unchanged), then restore the setting."""
    import torch
    if threads is None:
        yield
        return
    saved = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


def indexed_device(device):
    """``device`` with its index: for a bare ``cuda``, the calling thread's current CUDA device."""
    import torch
    if device.type == "cuda" and device.index is None:
        return torch.device("cuda", torch.cuda.current_device())
    return device


def _prepare_thread(device, threads: int | None) -> None:
    """Make a new thread compute like the one that started it. On CUDA, ``device`` (from
    :func:`indexed_device`, asked by the starting thread) becomes its current device: a new thread
    starts on cuda:0, where pinned memory would otherwise open a context. ``threads`` becomes its own
    torch intra-op thread count (None: leave it). Each thread keeps its own count (OpenMP's per-thread
    setting), taken from the latest global setting at its first operation: asking first makes that
    happen now, so the count set here stays whatever another thread sets later."""
    import torch
    if device is not None and device.type == "cuda":
        torch.cuda.set_device(device)
    if threads is not None:
        torch.get_num_threads()
        torch.set_num_threads(threads)


class Background:
    """``fn()`` in a daemon thread, or (``concurrent=False``) in the caller's thread when its result is
    asked for. :meth:`result` returns its value or raises what it raised. ``device`` and ``threads``:
    the CUDA device and torch thread count the thread computes with (:func:`_prepare_thread`)."""

    def __init__(self, fn, name: str, concurrent: bool = True, device=None, threads: int | None = None):
        self._fn, self._value, self._error, self._thread = fn, None, None, None
        if concurrent:
            device = indexed_device(device) if device is not None else None     # asked here, in the caller
            self._thread = threading.Thread(target=self._run, args=(device, threads), name=name, daemon=True)
            self._thread.start()

    def _run(self, device, threads) -> None:
        try:
            _prepare_thread(device, threads)
            self._value = self._fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller by result()
            self._error = exc

    def raise_if_failed(self) -> None:
        if self._error is not None:
            raise self._error

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def result(self):
        if self._thread is None:
            return self._fn()
        self.wait()
        self.raise_if_failed()
        return self._value
