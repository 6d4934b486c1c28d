"""Operator definitions. Importing this package registers every operator family."""
from . import registry
# Each module registers one family of operators (registration side effects).
from . import (creation, elemwise, reduce, linalg, shape, indexing, random, optimizer_ops,  # noqa: F401
               nn_conv, nn_activation, nn_norm, nn_output, sequence, rnn, image)
