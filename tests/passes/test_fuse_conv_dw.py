#!/usr/bin/env python3
"""test_fuse_conv_dw.py — a 1x1 conv whose output only a depthwise conv
reads, as one mopt.FusedConvDw (lib/passes/pass_fuse_conv_dw.c, opt_level
3, after the layout pass), through the `mopt` tool, on small generated
conv chains (x [B,3,H,W] -> 3x3 stem conv 3->16 -> HardSwish -> 1x1 conv
16->C -> act -> depthwise kxk conv stride s -> act -> 1x1 conv C->16):

  - fires once (`mopt optimize --report`) where the intermediate C*H*W*4
    is above the 2 MiB L2 constant: strides 1 and 2, odd H/W, 3x3 and 5x5,
    Relu and HardSwish;
  - does not fire where it fits the L2 (56x56), where the intermediate is
    also a graph output, where the depthwise conv is dilated, where its
    output is not blocked (the layout pass keeps a 49x51 one channels-last),
    or at opt_level 2.

Every case runs at opt_level 3 and 2, batch 1 and 2, 1 and 2 threads, with
the default backend and backend=ref (FusedConvDw's reference), within 1e-4
of ONNX Runtime. At opt_level 3 the 2-thread outputs (the two convs whole
on oneDNN's threads) must equal the 1-thread ones (in bands) bit for bit:
the runtime switches a node between 1 and 2 threads as it measures them.

usage: test_fuse_conv_dw.py MOPT_EXECUTABLE
"""
import os
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from cli_check import check, check_rewrites, failures, options, runner

MOPT = sys.argv[1]
rng = np.random.default_rng(1205)
mopt = runner(MOPT)


def chain(path, c, h, w, k, stride, act, shared=False, dilation=1):
    inits, nodes = {}, []

    def const(name, arr):
        inits[name] = np.asarray(arr, np.float32)
        return name

    def conv(name, x, cin, cout, kk, group=1, s=1, d=1):
        wt = const(name + "_w", rng.standard_normal((cout, cin // group, kk, kk))
                   / np.sqrt(cin // group * kk * kk))
        b = const(name + "_b", 0.1 * rng.standard_normal(cout))
        p = d * (kk - 1) // 2
        nodes.append(helper.make_node("Conv", [x, wt, b], [name], kernel_shape=[kk, kk],
                                      strides=[s, s], pads=[p, p, p, p], group=group,
                                      dilations=[d, d]))
        return name

    def activation(name, x):
        nodes.append(helper.make_node(act, [x], [name]))
        return name

    t = conv("c0", "x", 3, 16, 3)
    nodes.append(helper.make_node("HardSwish", [t], ["a0"]))
    t = activation("a1", conv("pw", "a0", 16, c, 1))
    t = activation("a2", conv("dw", t, c, c, k, group=c, s=stride, d=dilation))
    conv("y", t, c, 16, 1)
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 16, "h", "w"])]
    if shared:
        outs.append(helper.make_tensor_value_info("a1", TensorProto.FLOAT, ["batch", c, h, w]))
    g = helper.make_graph(
        nodes, os.path.basename(path),
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, h, w])], outs,
        [numpy_helper.from_array(a, n) for n, a in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return [o.name for o in outs]


def case(tmp, name, fuses, c, h, w, k, stride, act, **kw):
    path = os.path.join(tmp, name + ".onnx")
    names = chain(path, c, h, w, k, stride, act, **kw)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for level in (3, 2):
        opts = options(tmp, "%s_o%d" % (name, level), opt_level=level)
        r = mopt("optimize", path, "--options", opts, "--report", "-o",
                 os.path.join(tmp, "%s_o%d.mopt" % (name, level)))
        check(r.returncode == 0, "%s O%d: optimize exits 0" % (name, level), r)
        check_rewrites(r, "fuse_conv_dw", name, level, fuses, "fuses")
    for batch in (1, 2):
        x = rng.standard_normal((batch, 3, h, w)).astype(np.float32)
        ref = dict(zip(names, sess.run(None, {"x": x})))
        got_o3 = {}  # threads -> {output: array} at opt_level 3, default backend
        xp = os.path.join(tmp, "%s_x_b%d.npy" % (name, batch))
        np.save(xp, x)
        for level, backend, threads in ((3, "auto", 1), (3, "auto", 2), (3, "ref", 1),
                                        (2, "auto", 1), (2, "auto", 2)):
            tag = "%s O%d %s b%d t%d" % (name, level, backend, batch, threads)
            opts = options(tmp, "run", opt_level=level, threads=threads, backend=backend)
            out = os.path.join(tmp, "out_%s" % tag.replace(" ", "_"))
            r = mopt("run", path, "--options", opts, "--input", "x=" + xp, "--output-dir", out)
            check(r.returncode == 0, "%s: run exits 0" % tag, r)
            for n in names:
                p = os.path.join(out, n + ".npy")
                if not os.path.exists(p):
                    check(False, "%s: output %s missing" % (tag, n))
                    continue
                got = np.load(p)
                if got.shape != ref[n].shape:
                    check(False, "%s: %s shape %s, want %s" % (tag, n, got.shape, ref[n].shape))
                    continue
                err = float(np.max(np.abs(got - ref[n])))
                check(err <= 1e-4 * max(1.0, float(np.max(np.abs(ref[n])))),
                      "%s: %s within 1e-4 of ORT (max abs err %g)" % (tag, n, err))
                if level == 3 and backend == "auto":
                    got_o3.setdefault(threads, {})[n] = got
        for n in names:
            a, b = got_o3.get(1, {}).get(n), got_o3.get(2, {}).get(n)
            check(a is not None and b is not None and np.array_equal(a, b),
                  "%s b%d: %s at 2 threads equals 1 thread bit for bit" % (name, batch, n))


with tempfile.TemporaryDirectory() as tmp:
    case(tmp, "c64_113x115_k3_s2_relu", 1, 64, 113, 115, 3, 2, "Relu")
    case(tmp, "c64_91x91_k3_s1_hswish", 1, 64, 91, 91, 3, 1, "HardSwish")
    case(tmp, "c48_113x111_k5_s2_hswish", 1, 48, 113, 111, 5, 2, "HardSwish")
    case(tmp, "c64_56x56_fits_l2", 0, 64, 56, 56, 3, 2, "Relu")
    # 49x51 outputs: below the layout pass's blocked size, Y stays channels-last
    case(tmp, "c64_97x101_k3_s2_y_channels_last", 0, 64, 97, 101, 3, 2, "Relu")
    case(tmp, "c64_97x97_shared", 0, 64, 97, 97, 3, 2, "Relu", shared=True)
    case(tmp, "c64_97x97_dilated", 0, 64, 97, 97, 3, 1, "Relu", dilation=2)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("test_fuse_conv_dw: all cases passed")
