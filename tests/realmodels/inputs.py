"""inputs.py — deterministic, realistic inputs for the real-model suite.

Nothing here reads a file or the network: every array is made from a seeded
numpy generator, shaped like what the model's own package feeds it (a page or
a text line for OCR, a photo-like image for detectors, 16 kHz speech-like
audio cut in chunks for voice-activity detection, log-mel frames and audio
embeddings for the wake-word heads).
"""
import numpy as np


def rng(seed):
    return np.random.default_rng(seed)


def text_image(r, h, w, lines=None):
    """A grey-on-white page (h x w, values 0..1) with dark text-like strokes:
    rows of glyph boxes made of vertical and horizontal bars, word gaps, a
    little blur and sensor noise."""
    img = np.full((h, w), 0.93, np.float32) + r.normal(0, 0.015, (h, w)).astype(np.float32)
    if lines is None:
        lines = max(1, h // 40)
    line_h = h / lines
    for li in range(lines):
        top = int(li * line_h + line_h * 0.25)
        gh = max(6, int(line_h * 0.5))
        x = int(r.integers(2, max(3, w // 20)))
        right = int(w * r.uniform(0.7, 0.97))
        while x < right - 8:
            if r.random() < 0.12:  # a word gap
                x += int(gh * 0.8)
                continue
            gw = int(gh * r.uniform(0.5, 0.9))
            ink = r.uniform(0.05, 0.25)
            sw = max(1, gh // 7)
            for _ in range(int(r.integers(2, 5))):
                if r.random() < 0.5:  # vertical stroke
                    sx = x + int(r.integers(0, max(1, gw - sw)))
                    img[top:top + gh, sx:sx + sw] = ink
                else:  # horizontal stroke
                    sy = top + int(r.integers(0, max(1, gh - sw)))
                    img[sy:sy + sw, x:x + gw] = ink
            x += gw + max(1, gh // 6)
    # a 3x3 box blur, like a scanned page
    p = np.pad(img, 1, mode="edge")
    img = sum(p[dy:dy + h, dx:dx + w] for dy in range(3) for dx in range(3)) / 9.0
    return np.clip(img, 0, 1).astype(np.float32)


def photo_image(r, h, w):
    """An RGB photo-like image (3 x h x w, 0..1): a smooth background gradient,
    a few soft skin-toned and coloured ellipses, texture noise."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.empty((3, h, w), np.float32)
    base = r.uniform(0.2, 0.8, 3)
    for c in range(3):
        img[c] = base[c] + 0.2 * (yy / h - 0.5) * r.uniform(-1, 1) + 0.2 * (xx / w - 0.5)
    for _ in range(6):
        cy, cx = r.uniform(0, h), r.uniform(0, w)
        ry, rx = r.uniform(0.08, 0.3) * h, r.uniform(0.08, 0.3) * w
        colour = r.uniform(0.3, 0.95, 3) if r.random() < 0.5 else np.array([0.87, 0.67, 0.55])
        mask = np.exp(-(((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2) * 2.0)
        for c in range(3):
            img[c] = img[c] * (1 - mask) + colour[c] * mask
    img += r.normal(0, 0.02, img.shape).astype(np.float32)
    return np.clip(img, 0, 1).astype(np.float32)


def normalize(img3, mean, std):
    """(img - mean) / std per channel, for a 3 x h x w image."""
    m = np.asarray(mean, np.float32).reshape(3, 1, 1)
    s = np.asarray(std, np.float32).reshape(3, 1, 1)
    return ((img3 - m) / s).astype(np.float32)


def gray_to_rgb(img):
    return np.stack([img, img, img]).astype(np.float32)


def speech_audio(r, n, sr=16000):
    """n samples (float32, about -1..1) of speech-like audio: silence with
    room noise, then voiced segments (a glottal pulse train at a drifting
    pitch through two formant-like resonances, syllable envelopes), then
    silence again."""
    t = np.arange(n, dtype=np.float64) / sr
    audio = r.normal(0, 0.003, n)
    start, stop = int(n * 0.3), int(n * 0.8)
    seg = np.arange(stop - start) / sr
    f0 = 120 + 25 * np.sin(2 * np.pi * 1.3 * seg)
    phase = 2 * np.pi * np.cumsum(f0) / sr
    voiced = np.zeros_like(seg)
    for k, (formant, bw) in enumerate([(1, 1.0), (2, 0.7), (3, 0.5), (5, 0.35), (7, 0.2)]):
        voiced += bw * np.sin(formant * phase + k)
    envelope = 0.5 * (1 - np.cos(2 * np.pi * 4.0 * seg)) * (0.6 + 0.4 * np.sin(2 * np.pi * seg))
    audio[start:stop] += 0.25 * voiced * envelope + r.normal(0, 0.01, stop - start)
    audio += 0.002 * np.sin(2 * np.pi * 50 * t)  # mains hum
    return np.clip(audio, -1, 1).astype(np.float32)


def vad_chunks(seed, n_chunks, chunk, context):
    """n_chunks windows of chunk samples, each prefixed with the last
    `context` samples of the previous one (zeros before the first), as the
    silero-vad wrapper feeds its model."""
    audio = speech_audio(rng(seed), n_chunks * chunk)
    out, prev = [], np.zeros(context, np.float32)
    for i in range(n_chunks):
        c = audio[i * chunk:(i + 1) * chunk]
        out.append(np.concatenate([prev, c]).astype(np.float32) if context else c.copy())
        if context:
            prev = c[-context:]
    return out
