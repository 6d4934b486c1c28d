"""Python's parser, one thread at a time.

CPython 3.11 (seen with 3.11.7) can fail when two threads parse or compile at once ("SystemError:
AST constructor recursion depth mismatch"). neomx parses attribute text
(``ast.literal_eval``) and compiles the code of graphs it generates (``symbol/graph.py``, under
:data:`PARSER_LOCK`) from any thread that runs a model first, so both take one lock.
"""
import ast
import threading

__all__ = ['PARSER_LOCK', 'literal_eval']

PARSER_LOCK = threading.Lock()


def literal_eval(text):
    """``ast.literal_eval(text)``, parsed under the lock."""
    if not isinstance(text, str):
        return ast.literal_eval(text)       # a node: nothing to parse
    with PARSER_LOCK:
        tree = ast.parse(text.lstrip(' \t'), mode='eval')
    return ast.literal_eval(tree)
