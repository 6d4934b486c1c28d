"""Operators: indexing family."""
