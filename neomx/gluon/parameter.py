"""Gluon parameters."""
