"""ort_user_script.py — an ordinary ONNX Runtime inference script, written the
way ORT users write them. test_ort_dropin.py runs it twice: as it is, and with
only its `import onnxruntime as ort` line changed to `import mopt as ort`, and
compares what the two runs print and save.

usage: ort_user_script.py MODEL.onnx OUT_PREFIX   (writes OUT_PREFIX.json/.npz)
"""
import json
import sys

import numpy as np
import onnxruntime as ort

model_path, out_prefix = sys.argv[1], sys.argv[2]

# Session set-up as the ORT docs show it.
so = ort.SessionOptions()
so.intra_op_num_threads = 2
so.inter_op_num_threads = 1
so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
so.log_severity_level = 3
providers = [p for p in ("CPUExecutionProvider",) if p in ort.get_available_providers()]
sess = ort.InferenceSession(model_path, sess_options=so, providers=providers)

report = {
    "device": ort.get_device(),
    "providers": sess.get_providers(),
    "inputs": [{"name": i.name, "shape": i.shape, "type": i.type} for i in sess.get_inputs()],
    "outputs": [{"name": o.name, "shape": o.shape, "type": o.type} for o in sess.get_outputs()],
}
meta = sess.get_modelmeta()
report["meta_field_types"] = {
    k: type(getattr(meta, k)).__name__
    for k in ("producer_name", "graph_name", "domain", "description", "version",
              "custom_metadata_map")}

# Inputs made from the model's own description: symbolic dimensions get sizes.
sizes = {"batch": 2, "seq": 16}
np_types = {"tensor(float)": np.float32, "tensor(int64)": np.int64, "tensor(int32)": np.int32}
rng = np.random.default_rng(0)
feed = {}
for inp in sess.get_inputs():
    shape = [d if isinstance(d, int) else sizes.get(d, 1) for d in inp.shape]
    dtype = np_types[inp.type]
    if "mask" in inp.name:
        feed[inp.name] = np.ones(shape, dtype=dtype)
    elif np.issubdtype(dtype, np.integer):
        feed[inp.name] = rng.integers(0, 100, size=shape).astype(dtype)
    else:
        feed[inp.name] = rng.standard_normal(shape).astype(dtype)

# Plain runs: every output, then one picked by name.
output_names = [o.name for o in sess.get_outputs()]
outputs = sess.run(None, feed)
last_only = sess.run([output_names[-1]], feed)
report["n_outputs"] = len(outputs)
report["output_shapes"] = [list(o.shape) for o in outputs]
report["last_only_matches"] = bool(np.array_equal(last_only[0], outputs[-1]))

# IO binding into preallocated buffers: a raw pointer for the first output,
# an OrtValue for the others.
binding = sess.io_binding()
for name, value in feed.items():
    binding.bind_cpu_input(name, value)
buffers = [np.empty_like(o) for o in outputs]
binding.bind_output(output_names[0], "cpu", 0, buffers[0].dtype, buffers[0].shape,
                    buffers[0].ctypes.data)
for name, buf in zip(output_names[1:], buffers[1:]):
    binding.bind_ortvalue_output(name, ort.OrtValue.ortvalue_from_numpy(buf))
sess.run_with_iobinding(binding)
bound = binding.copy_outputs_to_cpu()
report["bound_matches_run"] = [bool(np.allclose(b, o, atol=1e-5)) for b, o in zip(bound, outputs)]
report["bound_written_in_place"] = [bool(np.array_equal(b, buf)) for b, buf in zip(bound, buffers)]

# What users see when they get a name wrong.
first = sess.get_inputs()[0].name
try:
    sess.run(None, {**feed, "not_an_input": feed[first]})
    report["unknown_input_error"] = None
except Exception as e:  # ORT raises its own InvalidArgument; mopt a NotFoundError
    report["unknown_input_error"] = str(e)
try:
    sess.run(None, {k: v for k, v in feed.items() if k != first})
    report["missing_input_error"] = None
except Exception as e:
    report["missing_input_error"] = str(e)

np.savez(out_prefix + ".npz", **{"out_%d" % i: o for i, o in enumerate(outputs)})
with open(out_prefix + ".json", "w") as f:
    json.dump(report, f, indent=1)
print(json.dumps(report, indent=1))
