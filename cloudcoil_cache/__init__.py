"""cloudcoil_cache: a client-side Kubernetes informer cache (list+watch reflectors, stores, handlers)."""

__version__ = "0.2.0"

__all__ = ["__version__", "after_fork"]


def after_fork() -> None:
    """Resume every cache inherited across ``fork()`` in this process now (see
    ``cloudcoil_cache.caching.after_fork``; a cache also resumes by itself at its next use)."""
    from cloudcoil_cache.caching import after_fork as resume

    resume()
