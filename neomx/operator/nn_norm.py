"""Operators: nn_norm family."""
