"""The ``pods`` app: views that read pods from the informer cache."""
