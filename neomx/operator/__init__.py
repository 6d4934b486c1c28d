"""Operator definitions. Importing this package registers every operator family."""
from . import registry
from . import elemwise, shape  # noqa: F401  (registration side effects)
