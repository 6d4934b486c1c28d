"""Gluon blocks."""
