"""Gluon losses."""
