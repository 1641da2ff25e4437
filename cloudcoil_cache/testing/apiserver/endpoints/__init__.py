"""The fake API server's endpoints: routing, discovery, CRUD, LIST, WATCH and subresources."""
