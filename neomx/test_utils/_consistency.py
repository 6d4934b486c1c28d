"""``check_consistency``: one Symbol bound in several (context, dtype) settings must agree."""
import numpy as np

from .assertions import assert_almost_equal


def _compare(exe_list, gt, names_of, ref_idx, rtol, atol, raise_on_err, equal_nan):
    for i, exe in enumerate(exe_list):
        if i == ref_idx:
            continue
        for name, arr in names_of(exe):
            if name not in gt:
                continue
            try:
                assert_almost_equal(arr, gt[name], rtol=rtol, atol=atol, equal_nan=equal_nan)
            except AssertionError as err:
                print('Predict Err: ctx %d vs ctx %d at %s' % (i, ref_idx, name))
                if raise_on_err:
                    raise err


def run_consistency(sym, ctx_list, scale, grad_req, arg_params, aux_params, rtol, atol,
                    raise_on_err, ground_truth, equal_nan, use_uniform, rand_type):
    """See ``check_consistency``."""
    if len(ctx_list) < 2 and ground_truth is None:
        raise ValueError('check_consistency needs two settings, or one and a ground truth')
    syms = sym if isinstance(sym, (list, tuple)) else [sym] * len(ctx_list)
    output_names = syms[0].list_outputs()
    exe_list = [s.simple_bind(grad_req=grad_req, **ctx) for s, ctx in zip(syms, ctx_list)]
    arg_params = {} if arg_params is None else dict(arg_params)
    aux_params = {} if aux_params is None else dict(aux_params)
    for name, arr in exe_list[0].arg_dict.items():
        if name not in arg_params:
            if use_uniform:
                value = np.random.uniform(-0.92 * scale, 0.92 * scale, size=arr.shape)
            else:
                value = np.random.normal(size=arr.shape, scale=scale)
            arg_params[name] = value.astype(rand_type)
    for name in exe_list[0].aux_dict:
        aux_params.setdefault(name, 0)
    for exe in exe_list:
        for name, arr in exe.arg_dict.items():
            arr[:] = arg_params[name]
        for name, arr in exe.aux_dict.items():
            arr[:] = aux_params[name]
        if grad_req == 'add':
            for arr in exe.grad_arrays:
                if arr is not None:
                    arr[:] = 0
    dtypes = [np.dtype(exe.outputs[0].dtype) if exe.outputs else np.dtype(np.float32)
              for exe in exe_list]
    ref_idx = int(np.argmax([d.itemsize for d in dtypes]))

    def outputs_of(exe):
        return zip(output_names, exe.outputs)

    for exe in exe_list:
        exe.forward(is_train=False)
    gt = ground_truth
    if gt is None:
        gt = dict(zip(output_names, exe_list[ref_idx].outputs))
    _compare(exe_list, gt, outputs_of, ref_idx if ground_truth is None else -1, rtol, atol,
             raise_on_err, equal_nan)

    if grad_req != 'null':
        for exe in exe_list:
            exe.forward(is_train=True)
            exe.backward(exe.outputs)

        def outputs_and_grads(exe):
            grads = [(k, v) for k, v in exe.grad_dict.items() if v is not None]
            return list(outputs_of(exe)) + grads
        if ground_truth is None:
            gt = dict(outputs_and_grads(exe_list[ref_idx]))
        _compare(exe_list, gt, outputs_and_grads, ref_idx if ground_truth is None else -1, rtol,
                 atol, raise_on_err, equal_nan)
    return gt
