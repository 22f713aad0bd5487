"""gen_einsum.py — op cases for Einsum: explicit and implicit outputs,
ellipsis broadcasting (leading, middle, differing ranks), diagonals and
traces, sums, three and four operands, upper-case labels, spaces, odd and
large shapes, empty dims, symbolic input dims, f32/f64/f16/i32/i64/u8 —
and the equations and shapes it must refuse, with the message it gives.
Expected outputs from numpy.einsum.

Run from the repo root: python3 tests/ops/gen_einsum.py
"""
import numpy as np

from opcase import Case, normal, rng

R = rng(1207)


def case(name, eq, shapes, dtype=np.float32, opset=12, input_shapes=None, tol=None):
    if np.issubdtype(dtype, np.integer):
        xs = [R.integers(-5 if np.issubdtype(dtype, np.signedinteger) else 0, 6, s).astype(dtype)
              for s in shapes]
    else:
        xs = [normal(R, s, dtype) for s in shapes]
    names = [f"x{k}" for k in range(len(xs))]
    # the reference in float64 (float16 rounds once at the end, as the library does)
    ref = np.einsum(eq, *[x.astype(np.float64) if dtype == np.float16 else x for x in xs])
    c = Case(f"einsum_{name}", opset=opset)
    c.node("Einsum", names, ["y"], equation=eq)
    if tol:
        c.tol(*tol)
    c.save(dict(zip(names, xs)), {"y": np.asarray(ref).astype(dtype)}, input_shapes=input_shapes)


case("matmul_odd", "ij,jk->ik", [(17, 33), (33, 9)])
case("matmul_implicit", "ij,jk", [(4, 5), (5, 3)])
case("transpose_implicit", "ba", [(3, 4)])
case("upper_implicit", "bA,Cb", [(5, 2), (3, 5)])  # implicit output 'AC': upper case first
case("spaces", " ij , jk -> ki ", [(2, 3), (3, 4)])
case("trace_implicit", "ii", [(6, 6)])
case("diag", "ii->i", [(5, 5)])
case("diag_3way", "iii->i", [(4, 4, 4)])
case("diag_kept", "iij->ji", [(3, 3, 4)])
case("batch_diag", "bii->bi", [(2, 4, 4)])
case("sum_all", "ijk->", [(3, 4, 5)])
case("sum_middle", "ijk->ik", [(3, 7, 5)])
case("permute4", "abcd->dbca", [(2, 3, 4, 5)])
case("ellipsis_lead", "...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 6)])
case("ellipsis_middle", "i...j->j...i", [(2, 3, 4, 5)])
case("ellipsis_implicit", "...ij,...jk", [(3, 2, 4), (4, 5)])
case("ellipsis_empty", "...i,...i->...", [(7,), (7,)])
case("ellipsis_scalar", "...,...->...", [(), (2, 3)])
case("scalar_times", "i,->i", [(5,), ()])
case("outer3", "i,j,k->ijk", [(2,), (3,), (4,)])
case("chain3", "ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)])
case("chain4_implicit", "ab,bc,cd,de", [(2, 3), (3, 4), (4, 5), (5, 2)])
case("bilinear", "bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)])
case("attention_scores", "bhqd,bhkd->bhqk", [(2, 3, 7, 16), (2, 3, 9, 16)])
case("batch_matmul_large", "bij,bjk->bik", [(8, 64, 96), (8, 96, 48)], tol=(1e-4, 1e-4))
case("label_broadcast", "ij,ij->ij", [(3, 1), (3, 4)])
case("shared_sum_later", "ij,jk,ij->ik", [(2, 3), (3, 4), (2, 3)])
case("dot_repeated", "i,i,i->", [(6,), (6,), (6,)])
case("empty_k", "ij,jk->ik", [(2, 0), (0, 3)])
case("empty_m", "ij,jk->ik", [(0, 4), (4, 3)])
case("empty_sum", "ij->", [(0, 3)])
case("symbolic", "ij,jk->ik", [(4, 5), (5, 3)], input_shapes={"x0": ["n", 5], "x1": [5, "m"]})
case("f64", "bij,bkj->bik", [(2, 3, 4), (2, 5, 4)], dtype=np.float64, opset=28)
case("f16_bridge", "ij,jk->ik", [(3, 4), (4, 5)], dtype=np.float16, tol=(1e-2, 1e-2))
case("i64", "ij,jk->ik", [(3, 4), (4, 5)], dtype=np.int64)
case("i32_diag_sum", "ii,ij->j", [(4, 4), (4, 3)], dtype=np.int32)
case("u8_bridge", "ij,jk->ik", [(3, 4), (4, 5)], dtype=np.uint8)


def error(name, eq, shapes, status, text, input_shapes=None, out_rank=1):
    xs = [normal(R, s) for s in shapes]
    names = [f"x{k}" for k in range(len(xs))]
    c = Case(f"einsum_err_{name}", opset=12)
    c.node("Einsum", names, ["y"], equation=eq)
    c.save_error(dict(zip(names, xs)), {"y": np.zeros((1,) * out_rank, np.float32)}, status, text,
                 input_shapes=input_shapes)


error("bad_char", "ij,j1->i", [(2, 3), (3, 4)], "invalid model", "invalid character '1'")
error("bad_dot", "i.j->i", [(2, 3)], "invalid model", "'.' must be part of an ellipsis")
error("two_ellipses", "...i...->i", [(2, 3)], "invalid model", "more than one ellipsis")
error("two_arrows", "ij->i->j", [(2, 3)], "invalid model", "more than one '->'")
error("term_count", "ij->i", [(2, 3), (2, 3)], "invalid model",
      "has 1 input terms but the node has 2 inputs")
error("out_label_unknown", "ij->k", [(2, 3)], "invalid model", "output label 'k' is in no input")
error("out_label_twice", "ij->ii", [(2, 3)], "invalid model", "output label 'i' appears twice")
error("out_ellipsis_alone", "ij->...i", [(2, 3)], "invalid model",
      "the output has an ellipsis but no input term has")
error("mismatched_dims", "ij,jk->ik", [(2, 3), (4, 5)], "shape error",
      "label 'j' is 4 in input 1 but 3 elsewhere")
error("rank_mismatch", "ijk->i", [(2, 3)], "shape error",
      "input 0 has rank 2 but its term has 3 labels")
error("rank_short_ellipsis", "ijk...->i", [(2, 3)], "shape error",
      "input 0 has rank 2 but its term has 3 labels and an ellipsis")
error("diag_mismatch", "ii->i", [(3, 4)], "shape error", "a diagonal needs equal sizes")
error("ellipsis_dropped", "...i->i", [(2, 3)], "shape error", "the output has no '...'")
# symbolic at load: the mismatch shows when run
error("mismatched_at_run", "ij,jk->ik", [(2, 3), (4, 5)], "shape error",
      "label 'j' is 4 in input 1 but 3 elsewhere",
      input_shapes={"x0": ["a", "b"], "x1": ["c", "d"]}, out_rank=2)
