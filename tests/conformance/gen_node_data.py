#!/usr/bin/env python3
"""gen_node_data.py — writes the ONNX backend node test cases of the installed
`onnx` package (pinned in scripts/install-deps.sh) in the standard layout:

    OUT/<case>/model.onnx
    OUT/<case>/test_data_set_0/input_K.pb, output_K.pb

The onnx wheel ships no node data and its `cmd_tools generate-data` writes only
the model cases, so this walks onnx.backend.test.case.node the same way.
Cases whose inputs/outputs are sequences, maps or optionals are written with
numpy_helper's SequenceProto/MapProto/OptionalProto encoders as onnx does.
A stamp file OUT/.onnx_version records the generating version; the folder is
regenerated only when it differs.

usage: gen_node_data.py OUT [--force] [--stamp FILE] [--require-version V]
  --stamp FILE          also write the version into FILE (a build stamp)
  --require-version V   fail unless the installed onnx is version V (the pin)
"""
import os
import shutil
import sys


def write_value(path, value, type_proto, name):
    from onnx import TensorProto, numpy_helper

    if type_proto.HasField("map_type"):
        proto = numpy_helper.from_dict(value, name)
    elif type_proto.HasField("sequence_type"):
        proto = numpy_helper.from_list(value, name)
    elif type_proto.HasField("optional_type"):
        proto = numpy_helper.from_optional(value, name)
    elif isinstance(value, TensorProto):
        proto = value
    else:
        proto = numpy_helper.from_array(value, name)
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    args = sys.argv[2:]
    force = "--force" in args
    extra_stamp = args[args.index("--stamp") + 1] if "--stamp" in args else None
    want = args[args.index("--require-version") + 1] if "--require-version" in args else None
    import warnings

    try:
        import onnx
        import onnx.backend.test.case.node as node_test
    except ImportError as e:
        print(f"gen_node_data: cannot import onnx ({e}); run scripts/install-deps.sh",
              file=sys.stderr)
        return 1
    if want and onnx.__version__ != want:
        print(f"gen_node_data: onnx {onnx.__version__} is installed but the conformance data "
              f"and tests/conformance/known_failures.txt are for onnx {want}; "
              f"pip install onnx=={want} (scripts/install-deps.sh)", file=sys.stderr)
        return 1

    def done():
        if extra_stamp:
            with open(extra_stamp, "w") as f:
                f.write(onnx.__version__ + "\n")
        return 0

    stamp = os.path.join(out, ".onnx_version")
    if not force and os.path.exists(stamp):
        with open(stamp) as f:
            if f.read().strip() == onnx.__version__:
                print(f"gen_node_data: {out} is current (onnx {onnx.__version__})")
                return done()
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node_test.collect_testcases()
    n = 0
    for case in cases:
        if case.kind != "node":
            continue
        d = os.path.join(out, case.name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        g = case.model.graph
        for i, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(d, f"test_data_set_{i}")
            os.makedirs(ds, exist_ok=True)
            for j, v in enumerate(inputs):
                write_value(os.path.join(ds, f"input_{j}.pb"), v, g.input[j].type,
                            g.input[j].name)
            for j, v in enumerate(outputs):
                write_value(os.path.join(ds, f"output_{j}.pb"), v, g.output[j].type,
                            g.output[j].name)
        n += 1
    with open(stamp, "w") as f:
        f.write(onnx.__version__ + "\n")
    print(f"gen_node_data: wrote {n} node cases of onnx {onnx.__version__} into {out}")
    return done()


if __name__ == "__main__":
    sys.exit(main())
