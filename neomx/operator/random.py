"""Operators: random family."""
