"""Where a tournament's chunks of deals are played: local worker processes, or a Ray cluster.

    card-envs evaluate ... --workers 2                                   # local processes (default)
    card-envs evaluate ... --backend ray --workers 2                     # a Ray instance started here
    card-envs evaluate ... --backend ray --address 10.0.0.1:6379         # an existing Ray cluster

A tournament is cut into chunks of whole deals; every chunk is a pure function of its job (the seed,
the deal range, the agents), so it returns the same games wherever and however often it runs. The
results are consumed in chunk order, keyed by the chunk's index: the tournament is identical, bit for
bit, whatever the backend, the worker count or the order in which chunks finish.

==========  ==========================================================================================
backend     how chunks run
==========  ==========================================================================================
``local``   ``--workers`` 1: in this process; more: a ``ProcessPoolExecutor`` of that many processes,
            at most two chunks per worker in flight
``ray``     Ray tasks (optional extra ``card-envs[ray]``, ``ray==2.60.0``). ``--address``: connect to
            that cluster (``ray start --head`` on one machine, ``ray start --address=HEAD:6379`` on
            the others; every node needs this package installed); without it a Ray instance with
            ``--workers`` CPUs is started in this process, on the loopback address only (set
            ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=1`` to advertise the network address). At most two
            chunks per cluster CPU are in flight. A worker that dies mid-chunk (killed, its node
            lost) is retried by Ray
            (``max_retries``); a chunk's result is taken once, by its index, so no deal is lost and
            none is counted twice
==========  ==========================================================================================

The consumer may stop early (an SPRT decision): pending chunks are cancelled.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from card_envs.core.errors import ConfigError

BACKENDS = ("local", "ray")
#: times Ray re-runs a chunk whose worker died before giving up on the tournament
RAY_RETRIES = 5


@dataclass(frozen=True)
class Backend:
    """Where chunks run (see the module docstring)."""

    kind: str = "local"
    workers: int = 1
    address: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in BACKENDS:
            raise ConfigError(f"unknown backend {self.kind!r}; choose one of {', '.join(BACKENDS)}")
        if self.workers < 1:
            raise ConfigError(f"workers must be at least 1, got {self.workers}")
        if self.address is not None and self.kind != "ray":
            raise ConfigError(f"--address {self.address!r} is for --backend ray (the backend is {self.kind!r})")

    def describe(self) -> str:
        if self.kind == "local":
            return f"local, {self.workers} worker process{'es' if self.workers > 1 else ''}"
        return f"ray at {self.address}" if self.address else f"ray, {self.workers} CPUs started here"


def ordered_results(run: Callable[[Any], Any], count: int, job: Callable[[int], Any], backend: Backend, *,
                    in_order: bool = True) -> Iterator[tuple[int, Any]]:
    """``(i, run(job(i)))`` for ``i = 0 .. count-1``, in that order (``in_order=False``: as they finish, for
    a consumer that files results by index). ``job(i)`` is called when chunk ``i`` is submitted, so it may
    depend on what was consumed before. Closing the iterator cancels pending work."""
    if backend.kind == "ray":
        yield from _ray_results(run, count, job, backend, in_order)
    elif backend.workers <= 1:
        for index in range(count):
            yield index, run(job(index))
    else:
        yield from _pool_results(run, count, job, backend.workers, in_order)


def _pool_results(run: Callable, count: int, job: Callable[[int], Any], workers: int,
                  in_order: bool) -> Iterator[tuple[int, Any]]:
    with ProcessPoolExecutor(workers) as pool:
        pending: dict[int, Future] = {}
        done: dict[int, Any] = {}
        submitted = consumed = 0
        try:
            while consumed < count:
                while submitted < count and len(pending) < 2 * workers:
                    pending[submitted] = pool.submit(run, job(submitted))
                    submitted += 1
                finished, _ = wait(pending.values(), return_when=FIRST_COMPLETED)
                for index in [i for i, f in pending.items() if f in finished]:
                    done[index] = pending.pop(index).result()
                yield from _release(done, consumed, in_order)
                consumed = submitted - len(pending) - len(done)  # handed over so far
        finally:
            for future in pending.values():
                future.cancel()


def connect_ray(backend: Backend) -> Any:
    """Import Ray and join (``address``) or start (``workers`` CPUs) an instance; returns the module."""
    if backend.address is None:  # a Ray for this machine alone: on the loopback address (read when ray is imported)
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        raise ConfigError("--backend ray needs Ray: pip install 'card-envs[ray]' (ray==2.60.0)") from None
    if not ray.is_initialized():
        if backend.address:
            ray.init(address=backend.address, log_to_driver=False)
        else:
            ray.init(address="local", num_cpus=backend.workers, include_dashboard=False, log_to_driver=False)
    return ray


_REMOTE: dict[Callable, Any] = {}


def _release(done: dict[int, Any], consumed: int, in_order: bool) -> Iterator[tuple[int, Any]]:
    """Hand over (and forget) the finished chunks: all of them, or the run of them from ``consumed`` on."""
    if not in_order:
        for index in sorted(done):
            yield index, done.pop(index)
        return
    while consumed in done:
        yield consumed, done.pop(consumed)
        consumed += 1


def _ray_results(run: Callable, count: int, job: Callable[[int], Any], backend: Backend,
                 in_order: bool) -> Iterator[tuple[int, Any]]:
    ray = connect_ray(backend)
    remote = _REMOTE.get(run)
    if remote is None:
        remote = _REMOTE[run] = ray.remote(max_retries=RAY_RETRIES, retry_exceptions=False)(run)
    in_flight = max(2, 2 * int(ray.cluster_resources().get("CPU", backend.workers)))
    pending: dict[Any, int] = {}  # object ref -> chunk index
    done: dict[int, Any] = {}
    submitted = consumed = 0
    try:
        while consumed < count:
            while submitted < count and len(pending) < in_flight:
                pending[remote.remote(job(submitted))] = submitted
                submitted += 1
            finished, _ = ray.wait(list(pending), num_returns=1)
            for ref in finished:
                index = pending.pop(ref)
                done[index] = ray.get(ref)  # a retried chunk still has one ref: taken once, by its index
            yield from _release(done, consumed, in_order)
            consumed = submitted - len(pending) - len(done)  # handed over so far
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


__all__ = ["BACKENDS", "RAY_RETRIES", "Backend", "connect_ray", "ordered_results"]
