"""make_corpus.py — writes golden/tokenizer_corpus.txt, the lines the
tokenizers (wordpiece.py, examples/embed's C WordPiece) are checked on
against the `tokenizers` package: the golden sentences and pairs, then
generated lines (fixed seed) that mix English words with what a BERT
tokenizer must get right: accents (precomposed and combining), Greek,
Cyrillic, CJK, Japanese kana, Korean, Arabic and Hebrew with marks, emoji
with variation selectors, fullwidth forms, punctuation of every script,
symbols, digits, control and zero-width characters, odd whitespace, very
long words. Run by hand; its output is committed:

  python3 tests/minilm/make_corpus.py
"""
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent

WORDS = ("the of and to in is was for on that with as by it at from his her an were are which "
         "this be or has had not but what all when there can one more who new about after "
         "running quickly unbelievable tokenization embeddings quantization transformer "
         "internationalization misunderstanding xylophone zebra quizzically jazz naïve café "
         "résumé coöperate façade Zürich Ærøskøbing Ångström Łódź Dvořák Çağlar São Paulo "
         "Mañana jalapeño crème brûlée Straße fiancée élève über señor ÉCOLE ÀÉÎÕÜ").split()
UNICODE = ["Αθήνα", "ελληνικά", "Ωμέγα", "Москва", "ёжик", "Йошкар-Ола", "Київ", "東京", "日本語",
           "中文字符", "你好世界", "こんにちは", "カタカナ", "한국어", "안녕하세요", "العربية",
           "مَرْحَبًا", "עִבְרִית", "हिन्दी", "ภาษาไทย", "Tiếng Việt", "❤️", "👍🏽", "🗽", "😀😃",
           "🇫🇷", "Ｆｕｌｌｗｉｄｔｈ", "ＡＢＣ１２３", "ｶﾀｶﾅ", "ﬁ ligature", "Ⅻ", "½ ¾ ²",
           "e\u0301", "a\u0308", "n\u0303", "\u00ad", "\u200b", "\u200d", "\ufeff", "\u2028",
           "\u00a0", "\u3000", "\t", "\x07", "\x1b", "№", "™", "©", "®", "°", "±", "×", "÷",
           "€", "£", "¥", "₹", "§", "¶", "†", "‡", "•", "…", "‰", "′", "″", "«", "»", "‹", "›",
           "„", "“", "”", "‘", "’", "–", "—", "¡", "¿", "·", "、", "。", "「", "」", "『",
           "』", "【", "】", "〈", "〉", "！", "？", "，", "：", "；", "（", "）", "→", "⇒",
           "∑", "√", "∞", "≈", "≠", "≤", "≥", "@", "#", "$", "%", "^", "&", "*", "_", "~",
           "`", "|", "\\", "<", ">", "{", "}", "[", "]", "'", '"', "İstanbul", "ǅ", "ẞ",
           "ΣΊΣΥΦΟΣ", "Ǆemal", "ĲSSEL", "K\u0327", "Å", "ǻ", "ȁ", "ỹ", "ỗ"]
NUMBERS = ["0", "42", "3.14159", "1,000,000", "2026-12-03", "12:30", "+44", "-7", "1e-9",
           "v2.4.1", "#1042", "$3.50", "50%", "4x4", "i7-1165G7", "0xDEADBEEF"]


def line(rng):
    n = rng.randint(1, 18)
    parts = []
    for _ in range(n):
        r = rng.random()
        if r < 0.55:
            w = rng.choice(WORDS)
            if rng.random() < 0.15:
                w = w.upper()
            elif rng.random() < 0.2:
                w = w.capitalize()
        elif r < 0.8:
            w = rng.choice(UNICODE)
        elif r < 0.93:
            w = rng.choice(NUMBERS)
        else:
            w = rng.choice(["supercalifragilisticexpialidocious" * rng.randint(1, 4),
                            "a" * rng.randint(95, 105), "x" + "y" * 120])
        parts.append(w)
    seps = [" ", " ", " ", "", "  ", ", ", ". ", "-", "/", "\u00a0"]
    out = parts[0]
    for p in parts[1:]:
        out += rng.choice(seps) + p
    return out.replace("\n", " ").replace("\r", " ")


def main():
    import test_minilm
    sents, pairs = test_minilm.golden()
    lines = list(sents) + [p for pair in pairs for p in pair]
    rng = random.Random(13)
    while len(lines) < 1200:
        lines.append(line(rng))
    lines.append("x" * 600)  # truncation: a line longer than 128 tokens once split
    lines.append(" ".join(["word"] * 300))
    out = HERE / "golden" / "tokenizer_corpus.txt"
    # U+2028/U+0085 would split lines for some readers: the file keeps one line per "\n"
    out.write_text("".join(s + "\n" for s in lines), encoding="utf-8")
    print("wrote %s: %d lines" % (out, len(lines)))


if __name__ == "__main__":
    import sys
    sys.path.insert(0, str(HERE))
    main()
