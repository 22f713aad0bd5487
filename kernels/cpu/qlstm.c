/*
 * qlstm.c — DynamicQuantizeLSTM's projections on the rows GEMM (qlstm.h):
 * a ref_dq_proj_fn for ref_dq_lstm_f32_proj that multiplies with the
 * packed weights, then folds the zero points back exactly.
 */
#include "kernels/cpu/qlstm.h"

#define ALIGN64(n) (((n) + 63) & ~(size_t)63)

/* Offsets in the pack: for which = 0 (W, K = input) and 1 (R, K = hidden),
 * the packed blocks of every direction, then wsum [dirs, 4H]. */
typedef struct ql_layout {
    int64_t K[2], G4, dirs;
    size_t wbytes[2]; /* one direction's packed blocks */
    size_t wp[2], wsum[2], total;
} ql_layout;

static void ql_layout_of(int64_t dirs, int64_t input, int64_t hidden, ql_layout *l) {
    l->K[0] = input, l->K[1] = hidden, l->G4 = 4 * hidden, l->dirs = dirs;
    size_t at = 0;
    for (int i = 0; i < 2; i++) {
        l->wbytes[i] = cpu_qrows_pack_bytes(l->K[i], l->G4);
        l->wp[i] = at;
        at += ALIGN64(l->wbytes[i] * (size_t)dirs);
        l->wsum[i] = at;
        at += ALIGN64((size_t)(dirs * l->G4) * sizeof(int32_t));
    }
    l->total = at;
}

size_t cpu_dq_lstm_pack_bytes(int64_t dirs, int64_t input, int64_t hidden) {
    ql_layout l;
    ql_layout_of(dirs, input, hidden, &l);
    return l.total;
}

void cpu_dq_lstm_pack(int64_t dirs, int64_t input, int64_t hidden, const ref_dq_weights *W,
                      const ref_dq_weights *R, void *pack) {
    ql_layout l;
    ql_layout_of(dirs, input, hidden, &l);
    uint8_t *base = pack;
    for (int i = 0; i < 2; i++) {
        const ref_dq_weights *w = i == 0 ? W : R;
        for (int64_t d = 0; d < dirs; d++)
            cpu_qrows_pack((const uint8_t *)w->w + d * l.K[i] * l.G4, w->is_signed, l.K[i], l.G4,
                           l.G4, (int8_t *)(base + l.wp[i] + (size_t)d * l.wbytes[i]),
                           (int32_t *)(base + l.wsum[i]) + d * l.G4);
    }
}

/* The projections' scratch after ref_dq_lstm_work_bytes: y [rows, ldy] i32,
 * z [4H] i32, scale [4H] f32, sa [rows] u32. */
static int64_t ql_ldy(const ref_rnn_params *p) {
    return (4 * p->hidden + CPU_QROWS_NB - 1) / CPU_QROWS_NB * CPU_QROWS_NB;
}
static int64_t ql_rows(const ref_rnn_params *p) {
    return p->seq * p->batch > p->batch ? p->seq * p->batch : p->batch;
}

size_t cpu_dq_lstm_work_bytes(const ref_rnn_params *p) {
    const int64_t rows = ql_rows(p), G4 = 4 * p->hidden;
    return ALIGN64(ref_dq_lstm_work_bytes(p)) + ALIGN64((size_t)(rows * ql_ldy(p)) * 4) +
           ALIGN64((size_t)G4 * 8) + ALIGN64((size_t)rows * 4);
}

typedef struct ql_ctx {
    ql_layout l;
    const uint8_t *pack;
    const ref_dq_weights *w[2];
    cpu_qrows_fn rows;
    int32_t *y, *z;
    int64_t ldy;
    float *scale;
    uint32_t *sa;
} ql_ctx;

static void ql_proj(void *arg, int which, int d, const uint8_t *a, uint8_t azp, float ascale,
                    int64_t m, float *out, bool accumulate) {
    ql_ctx *c = arg;
    const ref_dq_weights *w = c->w[which];
    const int64_t K = c->l.K[which], G4 = c->l.G4;
    const int8_t *wp = (const int8_t *)(c->pack + c->l.wp[which] + (size_t)d * c->l.wbytes[which]);
    const int32_t *wsum = (const int32_t *)(c->pack + c->l.wsum[which]) + d * G4;
    c->rows(a, K, m, K, wp, G4, c->y, c->ldy);
    for (int64_t col = 0; col < G4; col++) {
        /* the reference's scale: ascale * w_scale, rounded to f32 */
        c->scale[col] = ascale * w->scale[w->n_scale == 1 ? d : (int64_t)d * G4 + col];
        const int64_t zat = w->n_zp == 1 ? d : (int64_t)d * G4 + col;
        c->z[col] = w->is_signed ? ((const int8_t *)w->zp)[zat]
                                 : (int32_t)((const uint8_t *)w->zp)[zat] - 128;
    }
    for (int64_t r = 0; r < m; r++) {
        uint32_t s = 0;
        for (int64_t k = 0; k < K; k++)
            s += a[r * K + k];
        c->sa[r] = s;
    }
    /* sum (a - X)(w - Z) = sum a w - Z sum a - X sum w + K X Z (mod 2^32) */
    const uint32_t X = azp;
    for (int64_t r = 0; r < m; r++) {
        const uint32_t *yr = (const uint32_t *)c->y + r * c->ldy;
        float *o = out + r * G4;
        for (int64_t col = 0; col < G4; col++) {
            const uint32_t Z = (uint32_t)c->z[col];
            const uint32_t u =
                yr[col] - Z * c->sa[r] - X * (uint32_t)wsum[col] + (uint32_t)K * X * Z;
            const float v = (float)(int32_t)u * c->scale[col];
            o[col] = accumulate ? o[col] + v : v;
        }
    }
}

void cpu_dq_lstm_f32(const ref_rnn_params *p, const float *X, const ref_dq_weights *W,
                     const ref_dq_weights *R, const void *pack, cpu_qrows_fn rows,
                     ref_dq_gates_fn gates, const float *B, const float *h0, const float *c0,
                     const float *P, float *Y, float *Yh, float *Yc, void *work) {
    const int64_t rows_n = ql_rows(p), G4 = 4 * p->hidden;
    ql_ctx c = {.pack = pack, .w = {W, R}, .rows = rows, .ldy = ql_ldy(p)};
    ql_layout_of(ref_rnn_dirs(p->direction), p->input, p->hidden, &c.l);
    uint8_t *m = (uint8_t *)work + ALIGN64(ref_dq_lstm_work_bytes(p));
    c.y = (int32_t *)m;
    m += ALIGN64((size_t)(rows_n * c.ldy) * 4);
    c.z = (int32_t *)m;
    c.scale = (float *)(c.z + G4);
    m += ALIGN64((size_t)G4 * 8);
    c.sa = (uint32_t *)m;
    for (int d = 0; d < ref_rnn_dirs(p->direction); d++)
        if (p->act[d][0].kind != REF_RNN_ACT_SIGMOID || p->act[d][1].kind != REF_RNN_ACT_TANH ||
            p->act[d][2].kind != REF_RNN_ACT_TANH)
            gates = NULL;
    ref_dq_lstm_f32_proj(p, X, W, R, B, h0, c0, P, Y, Yh, Yc, work, ql_proj, &c, gates);
}
