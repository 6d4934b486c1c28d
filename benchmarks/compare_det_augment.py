"""Compare ImageDetRecordIter's detection augmentations with MXNet 1.9.1's, statistically
(MXNet's random streams cannot be reproduced): the distributions of the augmented image sizes,
the number of objects kept and the box coordinates, for crop samplers, emit modes and padding.

    python3 benchmarks/compare_det_augment.py make FILE.rec          # with neomx (writes PNGs)
    PYTHON benchmarks/compare_det_augment.py run neomx|mxnet FILE.rec OUT.json   # each interpreter
    python3 benchmarks/compare_det_augment.py compare MX.json NEOMX.json
"""
import importlib
import json
import sys

import numpy as np

CONFIGS = {
    'scale_aspect': dict(rand_crop_prob=1, min_crop_scales=(0.3,), min_crop_aspect_ratios=(0.5,),
                         max_crop_aspect_ratios=(2.0,)),
    'wide_aspect': dict(rand_crop_prob=1, min_crop_scales=(0.5,), max_crop_scales=(0.9,),
                        min_crop_aspect_ratios=(0.25,), max_crop_aspect_ratios=(6.0,)),
    'iou_only': dict(rand_crop_prob=1, min_crop_scales=(0.1,), min_crop_overlaps=(0.5,)),
    'all_six': dict(rand_crop_prob=1, min_crop_scales=(0.1,), min_crop_overlaps=(0.3,),
                    max_crop_overlaps=(0.99,), min_crop_sample_coverages=(0.01,),
                    max_crop_sample_coverages=(0.99,), min_crop_object_coverages=(0.01,),
                    max_crop_object_coverages=(0.99,)),
    'object_coverage': dict(rand_crop_prob=1, min_crop_scales=(0.2,),
                            max_crop_object_coverages=(0.5,), max_crop_trials=(50,)),
    'overlap_mode': dict(rand_crop_prob=1, min_crop_scales=(0.3,), max_crop_scales=(0.8,),
                         crop_emit_mode='overlap', emit_overlap_thresh=0.5),
    'pad': dict(rand_pad_prob=1, max_pad_scale=3.0),
    'pad_and_crop': dict(rand_crop_prob=0.5, rand_pad_prob=0.5, max_pad_scale=2.0,
                         min_crop_scales=(0.3,)),
}


def make(path, records=300):
    mx = importlib.import_module('neomx')
    writer = mx.recordio.MXRecordIO(path, 'w')
    image = np.zeros((100, 200, 3), np.uint8)
    label = np.array([2, 5, 1, 0.4, 0.4, 0.6, 0.6, 2, 0.05, 0.05, 0.15, 0.2], np.float32)
    for i in range(records):
        writer.write(mx.recordio.pack_img(mx.recordio.IRHeader(0, label, i, 0), image, img_fmt='.png'))
    writer.close()


def run(module, path, out):
    mx = importlib.import_module(module)
    labels = {}
    for name, arguments in CONFIGS.items():
        # 'shrink' into a large canvas: the label's rows/columns are the window's pixels.
        data_iter = mx.io.ImageDetRecordIter(path_imgrec=path, data_shape=(3, 1000, 1000),
                                             batch_size=50, resize_mode='shrink',
                                             preprocess_threads=1, **arguments)
        labels[name] = np.concatenate([b.label[0].asnumpy() for b in data_iter]).tolist()
    with open(out, 'w') as stream:
        json.dump(labels, stream)


def _summary(labels):
    labels = np.array(labels)
    rows, cols, objects = labels[:, 1], labels[:, 2], (labels[:, 3] - 2) / 5
    return {'rows 5/50/95%': np.percentile(rows, [5, 50, 95]),
            'cols 5/50/95%': np.percentile(cols, [5, 50, 95]),
            'cols/rows 5/50/95%': np.percentile(cols / rows, [5, 50, 95]),
            'objects kept 1/2': [np.mean(objects == 1), np.mean(objects == 2)],
            'uncropped': np.mean((rows == 100) & (cols == 200)),
            'xmin 10/50/90%': np.percentile(labels[:, 7], [10, 50, 90])}


def compare(mxnet_json, neomx_json):
    np.set_printoptions(precision=3, suppress=True)
    with open(mxnet_json) as a, open(neomx_json) as b:
        reference, ours = json.load(a), json.load(b)
    for name in CONFIGS:
        print('==', name)
        for (field, theirs), mine in zip(_summary(reference[name]).items(),
                                         _summary(ours[name]).values()):
            print('  %-20s mxnet %-28s neomx %s' % (field, np.round(theirs, 3), np.round(mine, 3)))


if __name__ == '__main__':
    {'make': make, 'run': run, 'compare': compare}[sys.argv[1]](*sys.argv[2:])
