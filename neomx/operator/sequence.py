"""Operators: sequence family."""
