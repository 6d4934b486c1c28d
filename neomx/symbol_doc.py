"""``mx.symbol_doc``: extra documentation of symbolic operators, one class per operator
(``<Op>Doc``), whose docstring holds examples; ``SymbolDoc.get_output_shape`` shows a
Symbol's output shapes by name."""

__all__ = ['SymbolDoc', 'ActivationDoc', 'DropoutDoc', 'EmbeddingDoc', 'FlattenDoc', 'FullyConnectedDoc',
           'ConcatDoc', 'BroadcastPlusDoc']


class SymbolDoc:
    """Base class of the operators' documentation.

    >>> fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=4, name='fc')
    >>> mx.symbol_doc.SymbolDoc.get_output_shape(fc, data=(2, 3))
    {'fc_output': (2, 4)}
    """

    @staticmethod
    def get_output_shape(sym, **input_shapes):
        """{output name: shape} of ``sym`` for the given input shapes."""
        _, out_shapes, _ = sym.infer_shape(**input_shapes)
        return dict(zip(sym.list_outputs(), out_shapes))


class ActivationDoc(SymbolDoc):
    """
    >>> act = mx.sym.Activation(mx.sym.var('x'), act_type='relu')
    >>> act.eval(x=mx.nd.array([-1, 2]))[0].asnumpy().tolist()
    [0.0, 2.0]
    """


class DropoutDoc(SymbolDoc):
    """
    Outside training, dropout passes its input through:

    >>> drop = mx.sym.Dropout(mx.sym.var('x'), p=0.5)
    >>> drop.eval(x=mx.nd.ones((2,)))[0].asnumpy().tolist()
    [1.0, 1.0]
    """


class EmbeddingDoc(SymbolDoc):
    """
    >>> emb = mx.sym.Embedding(mx.sym.var('i'), input_dim=10, output_dim=3, name='emb')
    >>> SymbolDoc.get_output_shape(emb, i=(4, 5))
    {'emb_output': (4, 5, 3)}
    """


class FlattenDoc(SymbolDoc):
    """
    >>> SymbolDoc.get_output_shape(mx.sym.flatten(mx.sym.var('x'), name='flat'), x=(2, 3, 4))
    {'flat_output': (2, 12)}
    """


class FullyConnectedDoc(SymbolDoc):
    """
    >>> fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=8, name='fc')
    >>> SymbolDoc.get_output_shape(fc, data=(5, 2, 3))
    {'fc_output': (5, 8)}
    """


class ConcatDoc(SymbolDoc):
    """
    >>> cat = mx.sym.concat(mx.sym.var('a'), mx.sym.var('b'), dim=1, name='cat')
    >>> SymbolDoc.get_output_shape(cat, a=(2, 3), b=(2, 4))
    {'cat_output': (2, 7)}
    """


class BroadcastPlusDoc(SymbolDoc):
    """
    >>> c = mx.sym.broadcast_plus(mx.sym.var('a'), mx.sym.var('b'))
    >>> c.eval(a=mx.nd.ones((2, 1)), b=mx.nd.ones((1, 2)))[0].asnumpy().tolist()
    [[2.0, 2.0], [2.0, 2.0]]
    """
