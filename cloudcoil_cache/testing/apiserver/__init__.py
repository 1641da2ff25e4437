"""The fake kube-apiserver, laid out like the real one: http, endpoints, registry, storage, machinery."""
