"""cloudcoil_cache: a client-side Kubernetes informer cache (list+watch reflectors, stores, handlers)."""

__version__ = "0.1.0"

__all__ = ["__version__"]
