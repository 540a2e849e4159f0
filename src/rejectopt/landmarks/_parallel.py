"""Independent pieces of the landmark experiment in forked worker processes (detection of each
face, the option grid's trainings, the learning curve's score fits)."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

__all__ = ["map_in_processes"]


_worker_function = None  # in a worker process of map_in_processes: the function it maps


def _init_worker(function) -> None:
    """Pool initializer: keep ``function`` (and the data it binds) in this worker process."""
    global _worker_function
    _worker_function = function


def _call_worker_function(task):
    return _worker_function(task)


def map_in_processes(function, tasks, n_jobs: int, chunksize: int = 1):
    """``map(function, tasks)`` in order, over ``n_jobs`` forked worker processes (1: in this process).

    Processes, not threads: dlib holds the GIL, and the score learners run
    single-threaded BLAS. The workers are forked, and ``function`` reaches them
    through the fork (the pool's initializer), not pickled: bind the large
    inputs shared by all tasks to it (:func:`functools.partial`), and only the
    tasks and the results are pickled. No re-import of the package in each
    worker. Each task is computed exactly as in the serial loop, so the results
    do not depend on ``n_jobs``.

    Parameters
    ----------
    function : callable
        Called on each task; it may bind large shared data (not pickled).
    tasks : sequence
        The tasks (each pickled to its worker); ``len(tasks)`` caps the workers.
    n_jobs : int
        Worker processes; 1 (or a single task) runs in this process, without a pool.
    chunksize : int, default=1
        Tasks sent to a worker at once (:meth:`concurrent.futures.Executor.map`).

    Yields
    ------
    object
        ``function(task)`` for each task, in the order of ``tasks``.
    """
    n_jobs = max(1, min(int(n_jobs), len(tasks)))
    if n_jobs == 1:
        yield from map(function, tasks)
        return
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(
        n_jobs, mp_context=context, initializer=_init_worker, initargs=(function,)
    ) as pool:
        yield from pool.map(_call_worker_function, tasks, chunksize=chunksize)
