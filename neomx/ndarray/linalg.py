"""``mx.nd.linalg``: operators generated from the registry (filled in by ``neomx.ndarray``)."""
