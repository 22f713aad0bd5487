"""chains.py — what the chain benchmarks (load_time.py, node_overhead.py) share:
writing a chain of one-input-one-output nodes on a float [1, 8] tensor, finding
the benchmark program in a build folder, and naming the CPU."""
import os
import platform
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def write_chain(path, n_nodes, ops, consts, graph_name):
    """Writes x -> ops[0] -> ops[1] -> ... -> y (n_nodes nodes, cycling through
    ops) on a float [1, 8] tensor. consts maps an op type to (name, array): that
    op takes the array as its second input (an initializer, written only when
    some node uses it)."""
    from onnx import TensorProto, helper, numpy_helper, save

    nodes = []
    prev = "x"
    used = set()
    for i in range(n_nodes):
        op = ops[i % len(ops)]
        out = "y" if i == n_nodes - 1 else f"t{i}"
        ins = [prev, consts[op][0]] if op in consts else [prev]
        used.update(ins[1:])
        nodes.append(helper.make_node(op, ins, [out], name=f"n{i}"))
        prev = out
    inits = [numpy_helper.from_array(a, name) for name, a in consts.values() if name in used]
    graph = helper.make_graph(
        nodes, graph_name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    save(model, path)


def add_bench_args(ap, name):
    """The --bench and --build options that find_bench(args, name, ...) reads."""
    ap.add_argument("--bench", help=f"the {name} program")
    ap.add_argument("--build", help=f"a build folder holding bench/{name}")


def ints(text):
    """[1000, 1] from "1000,1"."""
    return [int(n) for n in text.split(",")]


def find_bench(args, name, script):
    """args.bench, else build/bench/<name> (or build/<name>) under args.build or
    the repository's build folder; exits naming script when there is none."""
    if args.bench:
        return args.bench
    for d in [args.build, os.path.join(REPO, "build")]:
        if not d:
            continue
        for sub in ["bench", "."]:
            p = os.path.join(d, sub, name)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
    sys.exit(f"{script}: no {name} program (build it, or give --bench/--build)")


def have_onnx(script):
    """True when the onnx package imports; else prints that script is skipped."""
    try:
        import onnx  # noqa: F401
    except ImportError:
        print(f"{script}: the onnx package is not installed: skipped")
        return False
    return True


def cpu_model():
    """The model name from /proc/cpuinfo, with its family/model numbers (a VM's
    name can be as vague as "AMD EPYC")."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break
                k, _, v = line.partition(":")
                info[k.strip()] = v.strip()
    except OSError:
        pass
    name = info.get("model name") or platform.processor() or "unknown"
    if "cpu family" in info and "model" in info:
        name += f" (family {info['cpu family']}, model {info['model']})"
    return name
