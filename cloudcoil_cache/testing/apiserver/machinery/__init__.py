"""The fake API server's machinery (like k8s.io/apimachinery): resource types, Status errors, the schema,
patch algorithms, field ownership and selectors; storage and everything above use it."""
