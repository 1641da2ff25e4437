"""Fixture data: realistic, deterministic Kubernetes objects for tests and benchmarks."""
