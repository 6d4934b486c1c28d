"""Gluon utilities."""
