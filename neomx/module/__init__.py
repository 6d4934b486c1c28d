"""``mx.mod``: symbolic training with modules.

``Module(symbol)`` binds a Symbol to contexts and trains it (``fit``) or runs it
(``predict``, ``score``); ``BaseModule`` holds the loops any module builds on its primitives.
"""
from .base_module import BaseModule, BatchEndParam
from .executor_group import DataParallelExecutorGroup
from .module import Module

__all__ = ['BaseModule', 'BatchEndParam', 'DataParallelExecutorGroup', 'Module']
