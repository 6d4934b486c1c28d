"""``mx.nd._internal``: operators generated from the registry (filled in by ``neomx.ndarray``)."""
