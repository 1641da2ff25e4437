"""The fake API server's storage: objects, one global revision, history and watchers."""
