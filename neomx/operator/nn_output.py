"""Operators: nn_output family."""
