"""``mx.mod``: symbolic training with modules.

``Module(symbol)`` binds a Symbol to contexts and trains it (``fit``) or runs it
(``predict``, ``score``); ``BaseModule`` holds the loops any module builds on its primitives.
``BucketingModule`` keeps one Module per input length (bucket) over shared parameters;
``SequentialModule`` chains modules.
"""
from .base_module import BaseModule, BatchEndParam
from .bucketing_module import BucketingModule
from .executor_group import DataParallelExecutorGroup
from .module import Module
from .python_module import PythonLossModule, PythonModule
from .sequential_module import SequentialModule

__all__ = ['BaseModule', 'BatchEndParam', 'BucketingModule', 'DataParallelExecutorGroup', 'Module',
           'PythonLossModule', 'PythonModule', 'SequentialModule']
