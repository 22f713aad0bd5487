"""gen_spectral.py — cases of the "spectral" op family (DFT, STFT,
MelWeightMatrix) that the ONNX node tests miss: odd and non-power-of-two
lengths, dft_length padding and truncation, negative axes, RFFT/IRFFT of odd
lengths, f64 through the float bridge, complex STFT, frame_length without a
window, other mel parameters and output types, and error paths. Expected
values come from numpy.fft in double precision.

Run from the repo root: python3 tests/ops/gen_spectral.py
"""
import numpy as np

from opcase import Case, rng

ERR_INVALID_ARGUMENT, ERR_INVALID_MODEL, ERR_SHAPE = 1, 5, 7


def to_ri(z):
    return np.stack((z.real, z.imag), axis=-1)


def dft_case(name, x, axis, inverse=0, onesided=0, dft_length=None, opset=20, tol=None):
    """x: real [..., 1] or complex [..., 2] float array."""
    z = x[..., 0] if x.shape[-1] == 1 else x[..., 0] + 1j * x[..., 1]
    z = z.astype(np.complex128)
    ax = axis if axis >= 0 else axis + x.ndim
    if inverse and onesided:
        y = np.fft.irfft(z, n=dft_length, axis=ax)[..., np.newaxis]
    elif inverse:
        y = to_ri(np.fft.ifft(z, n=dft_length, axis=ax))
    elif onesided:
        y = to_ri(np.fft.rfft(z.real, n=dft_length, axis=ax))
    else:
        y = to_ri(np.fft.fft(z, n=dft_length, axis=ax))
    c = Case(name, opset=opset)
    ins = {"x": x}
    names = ["x"]
    if dft_length is not None:
        ins["dft_length"] = np.array(dft_length, np.int64)
        names.append("dft_length")
    if opset >= 20:
        if dft_length is None:
            names.append("")
        ins["axis"] = np.array(axis, np.int64)
        names.append("axis")
        c.node("DFT", names, ["y"], inverse=inverse, onesided=onesided)
    else:
        c.node("DFT", names, ["y"], inverse=inverse, onesided=onesided, axis=axis)
    c.tol(*(tol or (1e-4, 1e-4)))
    c.save(ins, {"y": y.astype(x.dtype)})


def stft(x, step, window, n, onesided):
    z = x[..., 0] if x.shape[-1] == 1 else x[..., 0] + 1j * x[..., 1]
    frames = (z.shape[1] - n) // step + 1
    w = np.ones(n) if window is None else window.astype(np.float64)
    out = []
    for t in range(frames):
        seg = z[:, t * step:t * step + n] * w
        f = np.fft.fft(seg, axis=-1)
        out.append(f[:, :n // 2 + 1] if onesided else f)
    return to_ri(np.stack(out, axis=1))


def mel(n_mel, dft_length, rate, lo, hi):
    """Written from the ONNX definition (n_mel + 2 points equally spaced in mel)."""
    bins = dft_length // 2 + 1
    lo_m = 2595 * np.log10(1 + lo / 700)
    hi_m = 2595 * np.log10(1 + hi / 700)
    pts = np.arange(n_mel + 2) * ((hi_m - lo_m) / (n_mel + 2)) + lo_m
    hz = 700 * (10 ** (pts / 2595) - 1)
    idx = np.floor((dft_length + 1) * hz / rate).astype(int)
    m = np.zeros((bins, n_mel))
    for i in range(n_mel):
        l, c, r = idx[i], idx[i + 1], idx[i + 2]
        if c == l:
            m[c, i] = 1
        else:
            for j in range(l, c + 1):
                m[j, i] = (j - l) / (c - l)
        for j in range(c, r):
            m[j, i] = (r - j) / (r - c)
    return m


def main():
    g = rng(11)
    xr = g.standard_normal((2, 7, 3, 1)).astype(np.float32)
    xc = g.standard_normal((2, 12, 3, 2)).astype(np.float32)
    dft_case("dft_real_len7_axis1", xr, 1)
    dft_case("dft_real_len7_axis_neg3", xr, -3)
    dft_case("dft_real_axis2_len3", xr, 2)
    dft_case("dft_complex_len12_inverse", xc, 1, inverse=1)
    dft_case("dft_complex_pad_to_16", xc, 1, dft_length=16)
    dft_case("dft_complex_truncate_to_5", xc, 1, dft_length=5)
    dft_case("dft_rfft_len7", xr, 1, onesided=1)
    dft_case("dft_rfft_pad_to_10", xr, 1, onesided=1, dft_length=10)
    spec = to_ri(np.fft.rfft(g.standard_normal((3, 9)), axis=1)).astype(np.float32)
    dft_case("dft_irfft_odd_n9", spec, 1, inverse=1, onesided=1, dft_length=9)
    dft_case("dft_irfft_default_n8", spec, 1, inverse=1, onesided=1)
    dft_case("dft_opset17_axis2_inverse", xc, 2, inverse=1, opset=17)
    dft_case("dft_f64_len12", xc.astype(np.float64), 1, tol=(1e-5, 1e-5))
    x1 = g.standard_normal((1, 1000, 1)).astype(np.float32)
    dft_case("dft_real_len1000", x1, 1, tol=(2e-4, 1e-4))
    dft_case("dft_real_len1024", x1, 1, dft_length=1024, tol=(2e-4, 1e-4))

    # STFT
    sig = g.standard_normal((2, 37, 1)).astype(np.float32)
    hann = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(16) / 16)).astype(np.float32)
    c = Case("stft_real_hann16_step5", opset=17).tol(1e-4, 1e-4)
    c.node("STFT", ["signal", "step", "window"], ["y"])
    c.save({"signal": sig, "step": np.array(5, np.int64), "window": hann},
           {"y": stft(sig, 5, hann, 16, True).astype(np.float32)})
    c = Case("stft_real_frame_length10_twosided", opset=17).tol(1e-4, 1e-4)
    c.node("STFT", ["signal", "step", "", "frame_length"], ["y"], onesided=0)
    c.save({"signal": sig, "step": np.array(3, np.int32), "frame_length": np.array(10, np.int32)},
           {"y": stft(sig, 3, None, 10, False).astype(np.float32)})
    csig = g.standard_normal((1, 20, 2)).astype(np.float32)
    win = g.uniform(0, 1, 6).astype(np.float32)
    c = Case("stft_complex_window_and_length", opset=17).tol(1e-4, 1e-4)
    c.node("STFT", ["signal", "step", "window", "frame_length"], ["y"], onesided=0)
    c.save({"signal": csig, "step": np.array(4, np.int64), "window": win,
            "frame_length": np.array(6, np.int64)},
           {"y": stft(csig, 4, win, 6, False).astype(np.float32)})

    # MelWeightMatrix
    for name, args, dtype, odt in (("mel_16k_n5_dft32", (5, 32, 16000, 20.0, 8000.0), np.float32,
                                    None),
                                   ("mel_8k_n10_dft256_f64", (10, 256, 8000, 0.0, 4000.0),
                                    np.float64, 11),
                                   ("mel_22k_n3_dft15_odd", (3, 15, 22050, 100.0, 6000.0),
                                    np.float32, None)):
        n_mel, dl, rate, lo, hi = args
        c = Case(name, opset=17)
        c.node("MelWeightMatrix", ["n", "dl", "sr", "lo", "hi"], ["m"], output_datatype=odt)
        c.save({"n": np.array(n_mel, np.int64), "dl": np.array(dl, np.int64),
                "sr": np.array(rate, np.int32), "lo": np.array(lo, np.float32),
                "hi": np.array(hi, np.float32)},
               {"m": mel(n_mel, dl, rate, np.float32(lo), np.float32(hi)).astype(dtype)})

    # errors
    c = Case("dft_err_rfft_complex", opset=20).expect_error(ERR_INVALID_ARGUMENT, "takes real input")
    c.node("DFT", ["x"], ["y"], onesided=1)
    c.save({"x": xc}, {"y": xc})
    c = Case("dft_err_irfft_real", opset=20).expect_error(ERR_INVALID_ARGUMENT, "takes complex input")
    c.node("DFT", ["x"], ["y"], onesided=1, inverse=1)
    c.save({"x": xr}, {"y": xr})
    c = Case("dft_err_axis_last", opset=20).expect_error(ERR_INVALID_ARGUMENT, "axis -1 is out of range")
    c.node("DFT", ["x", "", "axis"], ["y"])
    c.save({"x": xr, "axis": np.array(-1, np.int64)}, {"y": xr})
    c = Case("dft_err_axis_attr_opset17", opset=17).expect_error(ERR_INVALID_MODEL,
                                                                 "axis 3 is out of range")
    c.node("DFT", ["x"], ["y"], axis=3)
    c.save({"x": xr}, {"y": xr})
    c = Case("dft_err_length_zero", opset=20).expect_error(ERR_INVALID_ARGUMENT, "dft_length is 0")
    c.node("DFT", ["x", "n"], ["y"])
    c.save({"x": xr, "n": np.array(0, np.int64)}, {"y": xr})
    c = Case("stft_err_short_signal", opset=17).expect_error(ERR_SHAPE, "shorter than one frame")
    c.node("STFT", ["signal", "step", "", "frame_length"], ["y"])
    c.save({"signal": sig, "step": np.array(1, np.int64), "frame_length": np.array(40, np.int64)},
           {"y": np.zeros((2, 1, 21, 2), np.float32)})
    c = Case("stft_err_window_length", opset=17).expect_error(ERR_SHAPE,
                                                              "must have frame_length = 8")
    c.node("STFT", ["signal", "step", "window", "frame_length"], ["y"])
    c.save({"signal": sig, "step": np.array(1, np.int64), "window": hann,
            "frame_length": np.array(8, np.int64)}, {"y": np.zeros((2, 1, 5, 2), np.float32)})
    c = Case("stft_err_step_zero", opset=17).expect_error(ERR_INVALID_ARGUMENT,
                                                          "frame_step is 0")
    c.node("STFT", ["signal", "step", "window"], ["y"])
    c.save({"signal": sig, "step": np.array(0, np.int64), "window": hann},
           {"y": np.zeros((2, 1, 9, 2), np.float32)})
    c = Case("stft_err_onesided_complex", opset=17).expect_error(ERR_INVALID_ARGUMENT,
                                                                 "set onesided=0")
    c.node("STFT", ["signal", "step", "window"], ["y"])
    c.save({"signal": csig, "step": np.array(2, np.int64), "window": win},
           {"y": np.zeros((1, 1, 4, 2), np.float32)})
    c = Case("mel_err_edges", opset=17).expect_error(ERR_INVALID_ARGUMENT,
                                                     "lower_edge_hertz < upper_edge_hertz")
    c.node("MelWeightMatrix", ["n", "dl", "sr", "lo", "hi"], ["m"])
    c.save({"n": np.array(4, np.int64), "dl": np.array(16, np.int64),
            "sr": np.array(8000, np.int64), "lo": np.array(3000, np.float32),
            "hi": np.array(1000, np.float32)}, {"m": np.zeros((9, 4), np.float32)})


if __name__ == "__main__":
    main()
