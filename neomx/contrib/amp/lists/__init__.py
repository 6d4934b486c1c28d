"""MXNet's lists of operators for automatic mixed precision, one module per target dtype."""
from . import symbol_bf16, symbol_fp16
