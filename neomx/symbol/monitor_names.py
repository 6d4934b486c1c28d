"""The names under which executor monitors report operators' inputs, as MXNet 1.9.1's.

With ``monitor_all``, MXNet reports before each operator runs, for every input,
``<node>_<input name>`` -- executors first the variable's own name when the input is a
variable (Gluon's op hooks do not). The input
name is the operator's declared one (``conv_data``, ``fc_weight``; ``arg0``... for
variadic operators), except for the operators MXNet registers without input names, which
it names by position (``act_input0``): ``operator.unnamed_inputs``, recorded with MXNet 1.9.1.
"""
from ..operator.unnamed_inputs import UNNAMED_INPUTS

__all__ = ['input_labels']


def input_labels(node, with_variables):
    """For each input entry of ``node`` (``node.inputs`` order): the names it is reported
    under; with ``with_variables`` (executors, not Gluon's op hooks), a variable's own name
    first."""
    if node.spec.name in UNNAMED_INPUTS:
        names = ['input%d' % i for i in range(len(node.inputs))]
    else:
        names = node.input_names()
    return [([child.name] if with_variables and child.is_variable else []) + ['%s_%s' % (node.name, name)]
            for (child, _), name in zip(node.inputs, names)]
