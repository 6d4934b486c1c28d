"""``mx.nd.sparse``: operators generated from the registry (filled in by ``neomx.ndarray``)."""
