"""The fake API server's transport: the HTTP server, the request handler, the request log, faults."""
