"""``gluon.data``: datasets, samplers and loaders."""
