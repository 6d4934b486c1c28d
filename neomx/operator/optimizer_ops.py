"""Operators: optimizer_ops family."""
