"""Gluon Trainer."""
