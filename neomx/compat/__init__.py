"""``neomx.compat``: run scripts that ``import mxnet`` on neomx."""
