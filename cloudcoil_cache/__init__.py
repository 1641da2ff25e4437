"""cloudcoil_cache: a client-side Kubernetes informer cache (list+watch reflectors, stores, handlers)."""

__version__ = "0.2.0"

__all__ = ["__version__"]
