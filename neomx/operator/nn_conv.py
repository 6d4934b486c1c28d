"""Operators: nn_conv family."""
