"""Python's parser, one thread at a time.

CPython 3.11 before 3.11.8 can fail when two threads parse or compile at once ("SystemError: AST
constructor recursion depth mismatch", python/cpython#106905). neomx parses attribute text
(``ast.literal_eval``) and compiles the code of graphs it generates from any thread that runs a
model first, so both go through one lock here.
"""
import ast
import threading

__all__ = ['literal_eval', 'compile_source']

_LOCK = threading.Lock()


def literal_eval(text):
    """``ast.literal_eval(text)``, parsed under the lock."""
    if not isinstance(text, str):
        return ast.literal_eval(text)       # a node: nothing to parse
    with _LOCK:
        tree = ast.parse(text.lstrip(' \t'), mode='eval')
    return ast.literal_eval(tree)


def compile_source(source, filename):
    """``compile(source, filename, 'exec')`` under the lock."""
    with _LOCK:
        return compile(source, filename, 'exec')
