"""``mx.kv``: key-value stores for parameter synchronisation."""
