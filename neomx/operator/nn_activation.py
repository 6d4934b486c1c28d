"""Operators: nn_activation family."""
