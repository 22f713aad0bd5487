#!/usr/bin/env python3
"""test_cli_quantize_check.py — the per-layer INT8 fallback on the "mel
front-end case" (issue 13; meson suite "cli").

Generates a mel-spectrogram-like front end with the onnx helper API:
frames [8, 128] -> MatMul "dft" (cos/sin basis) -> Mul "power" (square, a
power spectrum: one strong peak per frame, a floor ~1e-6 of it) -> MatMul
"mel" (triangular filterbank) -> Add eps, Log -> MatMul "proj". Dynamic int8
quantizes each row of mel's input with one scale, so the weak bands round
to zero and the log blows up: all-int8 breaks a cosine >= 0.999 budget.
Checks:
- int8_exclude: the excluded node runs a float kernel (MOPT_VERBOSE listing),
  the others onednn-int8; an unknown name fails naming it;
- `mopt compare` of all-int8 exits 1; `mopt quantize-check` exits 0, its
  report names "mel" among the fallbacks (and not "dft"), the options it
  writes meet the budget when `mopt compare` checks them;
- --rank cost on a 1x1 -> depthwise -> 1x1 conv model (int8_depthwise=int8:
  the depthwise conv int8, as it is not by default): the ranking follows
  its rule (nodes int8 does not speed up by 10% first, then noise per
  microsecond saved in steps of 2^(1/2), from its printed columns) and its
  options meet the budget;
- --confidence: the bound the report prints is the per-set mean less Z
  standard errors (per-set `mopt compare` runs), and each bisection step
  holds exactly when its bound meets the limit;
- --max-fallbacks 0 refuses: exit 1, REFUSED in the report, nothing written;
- `mopt tune` tries the fallback candidate and it holds the budget;
- `mopt optimize` with those options writes a .mopt that keeps the fallback;
- `mopt optimize --precision int8` warns that quality is unchecked.

usage: test_cli_quantize_check.py MOPT_EXECUTABLE SOURCE_ROOT
"""
import os
import re
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from cli_check import check, done, mopt

N_FFT, N_BINS, N_MEL, N_OUT, FRAMES = 128, 65, 24, 8, 8


def mel_model(path):
    n = np.arange(N_FFT)[:, None]
    k = np.arange(N_BINS)[None, :]
    win = np.hanning(N_FFT)[:, None]
    dft = np.concatenate([win * np.cos(2 * np.pi * n * k / N_FFT),
                          -win * np.sin(2 * np.pi * n * k / N_FFT)], axis=1)
    # mel: sum of re^2 and im^2 of each bin, then triangular bands
    edges = np.linspace(0, N_BINS - 1, N_MEL + 2)
    tri = np.zeros((N_BINS, N_MEL))
    for m in range(N_MEL):
        lo, c, hi = edges[m], edges[m + 1], edges[m + 2]
        for b in range(N_BINS):
            if lo <= b <= c:
                tri[b, m] = (b - lo) / max(c - lo, 1e-9)
            elif c < b <= hi:
                tri[b, m] = (hi - b) / max(hi - c, 1e-9)
    mel = np.concatenate([tri, tri], axis=0)
    proj = np.random.default_rng(7).standard_normal((N_MEL, N_OUT)) / np.sqrt(N_MEL)
    inits = [numpy_helper.from_array(a.astype(np.float32), name) for a, name in
             [(dft, "W_dft"), (mel, "W_mel"), (proj, "W_proj"),
              (np.array(1e-6), "eps")]]
    nodes = [
        helper.make_node("MatMul", ["frames", "W_dft"], ["spec"], name="dft"),
        helper.make_node("Mul", ["spec", "spec"], ["power"], name="power"),
        helper.make_node("MatMul", ["power", "W_mel"], ["melspec"], name="mel"),
        helper.make_node("Add", ["melspec", "eps"], ["mel_eps"], name="floor"),
        helper.make_node("Log", ["mel_eps"], ["logmel"], name="log"),
        helper.make_node("MatMul", ["logmel", "W_proj"], ["features"], name="proj"),
    ]
    g = helper.make_graph(
        nodes, "mel_frontend",
        [helper.make_tensor_value_info("frames", TensorProto.FLOAT, [FRAMES, N_FFT])],
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, [FRAMES, N_OUT])],
        inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def conv_model(path, gold):
    """--rank cost: 1x1 conv "pw1" -> ReLU -> depthwise 3x3 "dw" -> ReLU -> 1x1
    "pw2" on [1, 64, 48, 96]. Static int8 speeds the 1x1 convs up and slows
    the depthwise one down (its u8 input is quantized per channel); dw puts
    the least noise on the output alone."""
    rng = np.random.default_rng(5)
    c = 64
    inits = [numpy_helper.from_array(a.astype(np.float32), name) for a, name in [
        (rng.standard_normal((c, c, 1, 1)) / 8, "W_pw1"),
        (rng.standard_normal((c, 1, 3, 3)) / 3, "W_dw"),
        (rng.standard_normal((c, c, 1, 1)) / 8, "W_pw2")]]
    nodes = [helper.make_node("Conv", ["x", "W_pw1"], ["a"], name="pw1"),
             helper.make_node("Relu", ["a"], ["ar"], name="r1"),
             helper.make_node("Conv", ["ar", "W_dw"], ["b"], name="dw", group=c,
                              pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["b"], ["br"], name="r2"),
             helper.make_node("Conv", ["br", "W_pw2"], ["y"], name="pw2")]
    g = helper.make_graph(nodes, "pw_dw_pw",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 48, 96])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, 48, 96])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)
    sd = os.path.join(gold, "test_data_set_0")
    os.makedirs(sd)
    np.save(os.path.join(sd, "input_0.npy"), rng.standard_normal((1, c, 48, 96)).astype(np.float32))


def ranking(stdout):
    """[(node, 1 - cosine, fp32 us, int8 us)] of quantize-check's ranking table."""
    block = stdout.split("\nranking ")[-1].split("\n\n")[0].splitlines()[2:]
    rows = []
    for line in block:
        f = line.split()
        rows.append((f[0], float(f[2]), float(f[3]) if len(f) > 4 else None,
                     float(f[4]) if len(f) > 4 and f[4][0].isdigit() else None))
    return rows


def golden(d, sets=6):
    rng = np.random.default_rng(20261203)
    t = np.arange(N_FFT)
    for s in range(sets):
        x = np.zeros((FRAMES, N_FFT))
        for f in range(FRAMES):
            freq = rng.uniform(3, 60)
            x[f] = 20.0 * np.sin(2 * np.pi * freq * t / N_FFT + rng.uniform(0, 6.28))
            x[f] += 1.0 * rng.standard_normal(N_FFT)
        sd = os.path.join(d, "test_data_set_%d" % s)
        os.makedirs(sd)
        np.save(os.path.join(sd, "input_0.npy"), x.astype(np.float32))


def kernels(stderr):
    """{node name: kernel} from the MOPT_VERBOSE node listing."""
    out = {}
    for m in re.finditer(r"mopt: node \d+ '([^']*)' \S+ kernel=(\S+)", stderr):
        out[m.group(1)] = m.group(2)
    return out


with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "mel.onnx")
    gold = os.path.join(tmp, "golden")
    budget = os.path.join(tmp, "quality.yaml")
    mel_model(model)
    golden(gold)
    with open(budget, "w") as f:
        f.write("rules:\n  - metric: cosine\n    min: 0.999\n")
    frames = os.path.join(gold, "test_data_set_0", "input_0.npy")
    env = dict(os.environ, MOPT_VERBOSE="1")

    # 1. int8_exclude: float kernel for the excluded node, int8 for the others
    r = mopt("run", model, "--input", "frames=" + frames, "--precision", "int8",
             "--output-dir", tmp, env=env)
    k_all = kernels(r.stderr)
    check(r.returncode == 0 and k_all.get("mel") == "onednn-int8" and
          k_all.get("dft") == "onednn-int8", "all-int8: mel and dft run onednn-int8 (%s)" % k_all, r)
    opts = os.path.join(tmp, "ex.yaml")
    with open(opts, "w") as f:
        f.write('precision: int8\nint8_exclude: "mel"\n')
    r = mopt("run", model, "--input", "frames=" + frames, "--options", opts,
             "--output-dir", tmp, env=env)
    k_ex = kernels(r.stderr)
    check(r.returncode == 0 and "int8" not in k_ex.get("mel", "int8") and
          k_ex.get("dft") == "onednn-int8" and k_ex.get("proj") == "onednn-int8",
          "int8_exclude=mel: mel float, dft/proj int8 (%s)" % k_ex, r)
    check("int8_exclude: node 'mel'" in r.stderr, "MOPT_VERBOSE names the excluded node", r)
    with open(opts, "w") as f:
        f.write('precision: int8\nint8_exclude: "mel,nope"\n')
    r = mopt("run", model, "--input", "frames=" + frames, "--options", opts, "--output-dir", tmp)
    check(r.returncode == 1 and "'nope'" in r.stderr and "invalid argument" in r.stderr,
          "an unknown int8_exclude name fails naming it", r)

    r = mopt("run", model, "--input", "frames=" + frames, "--options", opts, "--precision",
             "fp32", "--output-dir", tmp)
    check(r.returncode == 1 and "needs precision=int8" in r.stderr,
          "int8_exclude without precision=int8 fails", r)

    # 2. all-int8 breaks the budget; excluding mel changes the outputs
    r = mopt("compare", model, model, "--golden", gold, "--budget", budget,
             "--test-set", "precision=int8")
    check(r.returncode == 1 and "budget violated" in r.stdout, "all-int8 breaks the budget", r)

    # 3. the fallback: names mel, writes options that hold the budget
    out = os.path.join(tmp, "fallback.yaml")
    r = mopt("quantize-check", model, "--golden", gold, "--budget", budget, "-o", out,
             "--runs", "3")
    print(r.stdout)
    check(r.returncode == 0, "quantize-check exits 0", r)
    rep = r.stdout.split("fallback report:")[-1]
    fell = re.findall(r"^    (\S+)\s+\S+\s+(?:alone int8|error added|1 - cosine alone):", rep, re.M)
    check(fell == ["mel"], "the report names mel only (%s)" % fell, r)
    check(re.search(r"speed p50: all-int8 [\d.]+ ms, with fallbacks [\d.]+ ms \(FP32\) / "
                    r"[\d.]+ ms \(BF16\), fp32 [\d.]+ ms", rep) is not None,
          "the report gives the speed (fallbacks in FP32 and in BF16)", r)
    check(os.path.exists(out), "options written", r)
    if os.path.exists(out):
        text = open(out).read()
        check("int8_exclude:" in text and "mel" in text and "precision: int8" in text,
              "options name mel:\n" + text)
        r2 = mopt("compare", model, model, "--golden", gold, "--budget", budget,
                  "--test-options", out)
        check(r2.returncode == 0 and "all 1 rule hold" in r2.stdout,
              "the written options meet the budget in mopt compare", r2)
        # a .mopt file keeps the fallback (format_minor 2)
        saved = os.path.join(tmp, "fallback.mopt")
        r2 = mopt("optimize", model, "--options", out, "-o", saved)
        check(r2.returncode == 0 and b"int8_exclude" in open(saved, "rb").read(4096),
              "optimize with the options records int8_exclude", r2)
        r2 = mopt("run", saved, "--input", "frames=" + frames, "--output-dir", tmp, env=env)
        k_saved = kernels(r2.stderr)
        check(r2.returncode == 0 and "int8" not in k_saved.get("mel", "int8") and
              k_saved.get("dft") == "onednn-int8", "the .mopt runs mel float (%s)" % k_saved, r2)
        r2 = mopt("compare", model, saved, "--golden", gold, "--budget", budget)
        check(r2.returncode == 0, "the saved .mopt meets the budget", r2)

    # static int8 (a calibration table): the same fallback
    calib = os.path.join(tmp, "calib.yaml")
    r = mopt("calibrate", model, "--inputs", gold, "-o", calib)
    check(r.returncode == 0, "calibrate", r)
    r = mopt("quantize-check", model, "--golden", gold, "--budget", budget, "--calibration",
             calib, "--runs", "0")
    rep = r.stdout.split("fallback report:")[-1]
    fell = re.findall(r"^    (\S+)\s+\S+\s+(?:alone int8|error added|1 - cosine alone):", rep, re.M)
    check(r.returncode == 0 and fell == ["mel"] and "StaticQMatMul" in r.stdout,
          "static int8: mel falls back (%s)" % fell, r)

    # the ranking: one per-layer run charges mel (its error shows after the log that
    # follows it) and the bisection confirms; --rank alone (one run per node) agrees
    check(re.search(r"^ranking .*\n.*\n  mel\s", r.stdout, re.M) is not None and
          re.search(r"^  top 1 .* \(holds\)", r.stdout, re.M) is not None,
          "--rank layers puts mel first and the bisection holds with the top 1", r)
    r = mopt("quantize-check", model, "--golden", gold, "--budget", budget, "--calibration",
             calib, "--runs", "0", "--rank", "layers")
    rep = r.stdout.split("fallback report:")[-1]
    fell = re.findall(r"^    (\S+)\s+\S+\s+error added:", rep, re.M)
    check(r.returncode == 0 and fell == ["mel"], "--rank layers: mel falls back (%s)" % fell, r)
    # --margin: a slack no fallback reaches (cosine is at most 1: relative slack <= 0.001)
    r = mopt("quantize-check", model, "--golden", gold, "--budget", budget, "--calibration",
             calib, "--runs", "0", "--margin", "0.01")
    check(r.returncode == 1 and "REFUSED" in r.stdout and "--margin" in r.stdout,
          "--margin 0.01 on cosine >= 0.999: refused, the report says why", r)
    r = mopt("quantize-check", model, "--golden", gold, "--budget", budget, "--margin", "2")
    check(r.returncode == 2 and "--margin 2" in r.stderr, "--margin 2 is a usage error", r)
    # --confidence Z: a mean rule's value less Z standard errors over the golden sets.
    # The per-set cosines of all-int8 (one `mopt compare` per set) give the bound the
    # report must print; the chosen fallback's bound meets the limit.
    mbudget = os.path.join(tmp, "quality_mean.yaml")
    with open(mbudget, "w") as f:
        f.write("rules:\n  - metric: cosine\n    stat: mean\n    min: 0.999\n")
    per_set = []
    for s in sorted(os.listdir(gold)):
        one = os.path.join(tmp, "one_" + s)
        os.makedirs(one, exist_ok=True)
        if not os.path.exists(os.path.join(one, s)):
            os.symlink(os.path.join(gold, s), os.path.join(one, s))
        r = mopt("compare", model, model, "--golden", one, "--budget", mbudget,
                 "--test-set", "precision=int8")
        m = re.search(r"^\S+\s+cosine\s+\S+\s+\S+\s+(\S+)$", r.stdout, re.M)
        per_set.append(float(m.group(1)) if m else float("nan"))
    v = np.array(per_set)
    want = v.mean() - 2 * v.std(ddof=1) / np.sqrt(len(v))
    r = mopt("quantize-check", model, "--golden", gold, "--budget", mbudget, "--runs", "0",
             "--confidence", "2")
    print(r.stdout)
    m = re.search(r"all-int8: bound (\S+)\)", r.stdout)
    got = float(m.group(1)) if m else float("nan")
    check(r.returncode == 0 and abs(got - want) <= 1e-4 * max(1.0, abs(want)),
          "--confidence 2: all-int8's bound %.6g = mean - 2 sd / sqrt(%d) of the per-set "
          "cosines %s (%.6g)" % (got, len(v), per_set, want), r)
    steps = re.findall(r"^  top \d+\s+in FP32 -> .* is (\S+), bound (\S+) \((holds|violated|holds, "
                       r"short of the margin)\)", r.stdout, re.M)
    check(steps and all(float(b) <= float(x) for x, b, _ in steps) and
          all((float(b) >= 0.999) == (h == "holds") for _, b, h in steps) and
          any(h == "holds" for _, _, h in steps),
          "--confidence 2: each bisection step holds exactly when its bound (<= its value) "
          "meets 0.999 (%s)" % steps, r)
    for flag, bad in (("--confidence", "-1"), ("--time-rounds", "0")):
        r = mopt("quantize-check", model, "--golden", gold, "--budget", budget, flag, bad)
        check(r.returncode == 2 and flag + " " + bad in r.stderr, "%s %s is a usage error"
              % (flag, bad), r)
    r = mopt("quantize-check", model, "--golden", gold, "--budget", budget, "--calibration",
             calib, "--runs", "0", "--rank", "alone")
    rep = r.stdout.split("fallback report:")[-1]
    fell = re.findall(r"^    (\S+)\s+\S+\s+alone int8:", rep, re.M)
    check(r.returncode == 0 and fell == ["mel"] and "sensitivity (that node alone" in r.stdout,
          "--rank alone: mel falls back (%s)" % fell, r)
    # --rank cost: the noise per microsecond int8 saves; a node int8 does not speed up
    # (the depthwise conv) falls back first, the bisection on the golden set decides
    # (static int8 leaves depthwise Convs float by default, since their int8 form is
    # slower: the option int8_depthwise=int8 brings it back for this ranking check;
    # --set gives it to both sides, FP32 ignores it)
    dw8 = "int8_depthwise=int8"
    cmodel, cgold = os.path.join(tmp, "conv.onnx"), os.path.join(tmp, "conv_golden")
    cbudget, ccalib = os.path.join(tmp, "conv_quality.yaml"), os.path.join(tmp, "conv_calib.yaml")
    conv_model(cmodel, cgold)
    with open(cbudget, "w") as f:
        f.write("rules:\n  - metric: cosine\n    min: 0.9999\n")
    r = mopt("calibrate", cmodel, "--inputs", cgold, "-o", ccalib)
    check(r.returncode == 0, "calibrate the conv model", r)
    r = mopt("compare", cmodel, cmodel, "--golden", cgold, "--budget", cbudget, "--test-set",
             "precision=int8", "--test-set", "calibration=" + ccalib, "--test-set", dw8)
    check(r.returncode == 1, "conv model: all-int8 breaks cosine >= 0.9999", r)
    ranks = {}
    for how in ("output", "cost"):
        out = os.path.join(tmp, "conv_%s.yaml" % how)
        r = mopt("quantize-check", cmodel, "--golden", cgold, "--budget", cbudget,
                 "--calibration", ccalib, "--runs", "0", "--rank", how, "--set", dw8, "-o", out)
        print(r.stdout)
        ranks[how] = ranking(r.stdout)
        check(r.returncode == 0 and os.path.exists(out), "--rank %s finds a fallback" % how, r)
        if os.path.exists(out):
            # the file carries the --set options the budget was checked with
            with open(out) as f:
                written = f.read()
            check('int8_depthwise: "int8"' in written,
                  "--rank %s: the options file keeps --set %s:\n%s" % (how, dw8, written))
            r2 = mopt("compare", cmodel, cmodel, "--golden", cgold, "--budget", cbudget,
                      "--test-options", out)
            check(r2.returncode == 0, "--rank %s: its options meet the budget" % how, r2)
    rc_ = ranks["cost"]
    check(len(rc_) == 3 and all(t is not None for _, _, t, _ in rc_),
          "--rank cost lists 3 nodes with their FP32 and int8 times (%s)" % rc_)
    if len(rc_) == 3 and all(t is not None and u is not None for _, _, t, u in rc_):
        # not sped up: a saving under 10% of the node's FP32 time; the others by noise per
        # microsecond saved in steps of 2^(1/2) (the printed figures are rounded: a node
        # within 1% of a step's edge may sit on either side), noisiest first within a step
        free = [t - u <= 0.10 * t for _, _, t, u in rc_]
        order_ok = free == sorted(free, reverse=True)
        for (a, fa), (b, fb) in zip(zip(rc_, free), zip(rc_[1:], free[1:])):
            if fa != fb:
                continue
            if fa:
                order_ok &= a[1] >= b[1]
                continue
            la, lb = (2 * np.log2(x[1] / (x[2] - x[3])) for x in (a, b))
            if min(abs(la - round(la)), abs(lb - round(lb))) < 0.03:
                continue  # on a step's edge
            order_ok &= bool(np.floor(la) > np.floor(lb) or
                             (np.floor(la) == np.floor(lb) and a[1] >= b[1]))
        check(order_ok, "--rank cost: the nodes int8 does not speed up first, noisiest first, "
              "then noise per microsecond saved in steps of 2^(1/2), noisiest first within "
              "a step (%s)" % rc_)
    r = mopt("quantize-check", model, "--golden", gold, "--budget", budget, "--rank", "random")
    check(r.returncode == 2 and "--rank random" in r.stderr, "--rank random is a usage error", r)

    # BF16 fallback: int8_fallback=bf16 runs the excluded node on a bf16 kernel
    with open(opts, "w") as f:
        f.write('precision: int8\nint8_exclude: "mel"\nint8_fallback: bf16\n')
    r = mopt("run", model, "--input", "frames=" + frames, "--options", opts,
             "--output-dir", tmp, env=env)
    k_bf = kernels(r.stderr)
    check(r.returncode == 0 and re.search(r"int8_exclude: node 'mel' \(\S+\) runs BF16", r.stderr) and
          k_bf.get("dft") == "onednn-int8" and "int8" not in k_bf.get("mel", "int8"),
          "int8_fallback=bf16: mel runs BF16 (%s), dft int8" % k_bf, r)
    # a .mopt file keeps the BF16 fallback (format_minor 3), and an FP32 one says fp32
    for fb in ("bf16", "fp32"):
        with open(opts, "w") as f:
            f.write('precision: int8\nint8_exclude: "mel"\nint8_fallback: %s\n' % fb)
        saved = os.path.join(tmp, "fallback_%s.mopt" % fb)
        r = mopt("optimize", model, "--options", opts, "-o", saved)
        head = open(saved, "rb").read(4096) if r.returncode == 0 else b""
        check(r.returncode == 0 and ("int8_fallback: \"%s\"" % fb).encode() in head,
              "optimize with int8_fallback=%s records it in the .mopt" % fb, r)
        r = mopt("run", saved, "--input", "frames=" + frames, "--output-dir", tmp, env=env)
        k_s = kernels(r.stderr)
        check(r.returncode == 0 and
              re.search(r"int8_exclude: node 'mel' \(\S+\) runs %s" % fb.upper(), r.stderr) and
              k_s.get("dft") == "onednn-int8" and "int8" not in k_s.get("mel", "int8"),
              "the saved .mopt runs mel %s (%s), dft int8" % (fb.upper(), k_s), r)
    # an unknown int8_fallback in a .mopt (header checksum recomputed) is refused by name
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "tests", "hostile"))
    import gen_hostile_mopt as H
    with open(saved, "rb") as f:
        magic, yaml, start, data = H.split(f.read())
    bad = os.path.join(tmp, "bad_fallback.mopt")
    with open(bad, "wb") as f:
        f.write(H.assemble(magic, yaml.replace(b'int8_fallback: "fp32"', b'int8_fallback: "fp64"'),
                           start, data))
    r = mopt("run", bad, "--input", "frames=" + frames, "--output-dir", tmp)
    check(r.returncode != 0 and "int8_fallback 'fp64'" in r.stderr,
          "a .mopt with int8_fallback fp64 is refused, naming it", r)
    out_bf = os.path.join(tmp, "fallback_bf16.yaml")
    r = mopt("quantize-check", model, "--golden", gold, "--budget", budget, "--fallback", "bf16",
             "-o", out_bf, "--runs", "0")
    rep = r.stdout.split("fallback report:")[-1]
    fell = re.findall(r"^    (\S+)\s+\S+\s+(?:alone int8|error added|1 - cosine alone):", rep, re.M)
    check(r.returncode == 0 and fell == ["mel"] and "fell back to BF16" in rep and
          os.path.exists(out_bf) and "int8_fallback: bf16" in open(out_bf).read(),
          "quantize-check --fallback bf16: mel in BF16 holds the budget, options say so", r)
    if os.path.exists(out_bf):
        r2 = mopt("compare", model, model, "--golden", gold, "--budget", budget,
                  "--test-options", out_bf)
        check(r2.returncode == 0, "the BF16-fallback options meet the budget in mopt compare", r2)
    r = mopt("quantize-check", model, "--golden", gold, "--budget", budget, "--fallback", "fp16")
    check(r.returncode == 2 and "--fallback fp16" in r.stderr, "--fallback fp16 is a usage error", r)

    # 4. refusal: no fallback allowed
    out0 = os.path.join(tmp, "refused.yaml")
    r = mopt("quantize-check", model, "--golden", gold, "--budget", budget, "-o", out0,
             "--max-fallbacks", "0", "--runs", "0")
    check(r.returncode == 1 and "REFUSED" in r.stdout and not os.path.exists(out0),
          "--max-fallbacks 0 refuses with exit 1 and writes nothing", r)
    r = mopt("quantize-check", model, "--golden", gold)
    check(r.returncode == 2, "no --budget: usage error", r)

    # mopt tune tries the fallback candidate (precision=int8 int8_exclude=@FALLBACK)
    tout = os.path.join(tmp, "tune")
    r = mopt("tune", model, "--inputs", gold, "--budget", budget, "--target", "p50", "-o", tout,
             "--rounds", "3", "--runs", "5", "--max-minutes", "1")
    report = open(os.path.join(tout, "report.md")).read() if r.returncode == 0 else ""
    row = [l for l in report.splitlines() if "| precision=int8 int8_exclude |" in l]
    check(r.returncode == 0 and "int8_exclude=mel" in report and row and "holds" in row[0],
          "tune tries int8_exclude=mel and it holds the budget (%s)" % row, r)
    dyn = [l for l in report.splitlines() if "| precision=int8 |" in l]
    check(dyn and "violated" in dyn[0], "tune: all-int8 breaks the budget (%s)" % dyn, r)

    # 5. mopt optimize --precision int8 warns
    r = mopt("optimize", model, "-o", os.path.join(tmp, "m.mopt"), "--precision", "int8")
    check(r.returncode == 0 and "quality" in r.stderr and "unchecked" in r.stderr,
          "optimize --precision int8 warns that quality is unchecked", r)
    r = mopt("optimize", model, "-o", os.path.join(tmp, "m2.mopt"))
    check(r.returncode == 0 and "unchecked" not in r.stderr, "no warning at fp32", r)

sys.exit(done())
