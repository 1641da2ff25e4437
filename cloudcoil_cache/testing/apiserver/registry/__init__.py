"""The fake API server's registry: resource types, admission, validation, schema and patches."""
