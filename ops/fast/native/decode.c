/* The small operators of a decode step for x86-64 CPUs with AVX2 and FMA, in float32: RMSNorm, RoPE, the
 * attention of one new query per row against its KV cache (grouped-query).
 *
 * Decoding one token, each of these works on a few hundred numbers, and PyTorch spends most of their time on
 * dispatch: RMSNorm is six ATen operators, RoPE seven, and SDPA for a single query a dozen; here each is one call
 * (bench/mechanisms.py measures what that buys), with the same arithmetic as ops/engine/functional.py: RoPE gives
 * the same bits (built with -ffp-contract=off, so no multiply and add are fused into one rounding), RMSNorm and
 * attention differ from PyTorch's only in the order the sums are taken. ops/engine/model.py runs them through the same
 * layer code, by name (kernels="native"); ops/fast/native/__init__.py builds, checks and wraps them. */
#include <math.h>
#include <stdlib.h>

#include "simd.h"

/* y = x / sqrt(mean(x^2) + eps) * w for each of `rows` rows of H: fn.rms_norm */
void rms_norm(const float *x, const float *w, float *y, long rows, long H, float eps) {
    for (long r = 0; r < rows; r++, x += H, y += H) {
        __m256 a = _mm256_setzero_ps();
        long j = 0;
        for (; j + 8 <= H; j += 8) {
            __m256 v = _mm256_loadu_ps(x + j);
            a = _mm256_fmadd_ps(v, v, a);
        }
        float ss = hsum(a);
        for (; j < H; j++)
            ss += x[j] * x[j];
        float inv = 1.0f / sqrtf(ss / (float)H + eps);
        for (j = 0; j < H; j++)
            y[j] = w[j] * (x[j] * inv);
    }
}

/* x (B, n, S, hd), cos and sin (B, S, hd), all contiguous: y = x * cos + rotate_half(x) * sin (fn.apply_rope),
 * where rotate_half turns the pair (x_j, x_{j + hd/2}) into (-x_{j + hd/2}, x_j) */
void rope(const float *x, const float *cs, const float *sn, float *y, long B, long n, long S, long hd) {
    long h2 = hd / 2;
    for (long b = 0; b < B; b++)
        for (long h = 0; h < n; h++)
            for (long s = 0; s < S; s++) {
                long row = ((b * n + h) * S + s) * hd, angle = (b * S + s) * hd;
                const float *xi = x + row, *c = cs + angle, *si = sn + angle;
                float *yo = y + row;
                for (long j = 0; j < h2; j++)
                    yo[j] = xi[j] * c[j] + (-xi[j + h2]) * si[j];
                for (long j = h2; j < hd; j++)
                    yo[j] = xi[j] * c[j] + xi[j - h2] * si[j];
            }
}

static inline __m256 hsum8(const __m256 a[8]) {           /* lane u = the 8 lanes of a[u] added up */
    __m256 s01 = _mm256_hadd_ps(a[0], a[1]), s23 = _mm256_hadd_ps(a[2], a[3]);
    __m256 s45 = _mm256_hadd_ps(a[4], a[5]), s67 = _mm256_hadd_ps(a[6], a[7]);
    __m256 s0123 = _mm256_hadd_ps(s01, s23), s4567 = _mm256_hadd_ps(s45, s67);     /* halves of each sum */
    return _mm256_add_ps(_mm256_permute2f128_ps(s0123, s4567, 0x20), _mm256_permute2f128_ps(s0123, s4567, 0x31));
}

static inline __m256 exp8(__m256 x) {                      /* e^x of 8 lanes, x <= 0: Cephes' expf, ~1 ulp */
    x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));          /* e^-87 ~ 1.6e-38: the rest rounds to it */
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);      /* x - n ln 2, ln 2 in two parts */
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));   /* e^r */
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));                        /* e^r * 2^n */
}

/* Attention of one query per row, no mask (every cached key is visible to the newest token):
 * q (B, nh, hd) contiguous; k and v (B, nkv, T, hd) with row strides kb, kh (vb, vh) and rows of hd contiguous,
 * as the KV cache's views are; out (B, nh, hd) = softmax(q k^T / sqrt(hd)) v, query head h reading KV head
 * h / (nh / nkv). The nh / nkv queries of a KV head are done one after another while its keys and values are
 * still in cache; scores 8 keys at a time (8 independent sums). hd % 8 == 0 and hd <= 256 (the wrapper checks). */
void attend1(const float *q, const float *k, const float *v, float *out, long B, long nh, long nkv, long T, long hd,
             long kb, long kh, long vb, long vh) {
    long rep = nh / nkv, hv = hd / 8;
    float scale = 1.0f / sqrtf((float)hd);
    #pragma omp parallel for schedule(static) if (B * nh * T * hd > (1L << 20))
    for (long bg = 0; bg < B * nkv; bg++) {
        long b = bg / nkv, g = bg % nkv;
        const float *qg = q + (b * nh + g * rep) * hd, *kg = k + b * kb + g * kh, *vg = v + b * vb + g * vh;
        float *og = out + (b * nh + g * rep) * hd;
        float small[8192];
        float *sc = rep * T <= 8192 ? small : malloc(sizeof(float) * rep * T);   /* scores, rep rows of T */
        for (long r = 0; r < rep; r++) {                   /* scores of query r: 8 keys at a time */
            const float *qr = qg + r * hd;
            float *s = sc + r * T;
            long t = 0;
            for (; t + 8 <= T; t += 8) {
                __m256 a[8];
                for (int u = 0; u < 8; u++)
                    a[u] = _mm256_setzero_ps();
                for (long j = 0; j < hv; j++) {
                    __m256 qv = _mm256_loadu_ps(qr + 8 * j);
                    for (int u = 0; u < 8; u++)
                        a[u] = _mm256_fmadd_ps(qv, _mm256_loadu_ps(kg + (t + u) * hd + 8 * j), a[u]);
                }
                _mm256_storeu_ps(s + t, _mm256_mul_ps(hsum8(a), _mm256_set1_ps(scale)));
            }
            for (; t < T; t++) {
                __m256 a = _mm256_setzero_ps();
                for (long j = 0; j < hv; j++)
                    a = _mm256_fmadd_ps(_mm256_loadu_ps(qr + 8 * j), _mm256_loadu_ps(kg + t * hd + 8 * j), a);
                s[t] = hsum(a) * scale;
            }
        }
        for (long r = 0; r < rep; r++) {
            float *s = sc + r * T, m = -INFINITY, sum;
            for (long t = 0; t < T; t++)
                m = s[t] > m ? s[t] : m;
            __m256 mv = _mm256_set1_ps(m), sv = _mm256_setzero_ps();
            long t = 0;
            for (; t + 8 <= T; t += 8) {                   /* softmax numerators e^(s - max), and their sum */
                __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(s + t), mv));
                _mm256_storeu_ps(s + t, e);
                sv = _mm256_add_ps(sv, e);
            }
            sum = hsum(sv);
            for (; t < T; t++) {
                s[t] = expf(s[t] - m);
                sum += s[t];
            }
            __m256 acc[32];                                /* the weighted sum of value rows, hd wide */
            for (long j = 0; j < hv; j++)
                acc[j] = _mm256_setzero_ps();
            for (t = 0; t < T; t++) {
                __m256 p = _mm256_set1_ps(s[t]);
                const float *vt = vg + t * hd;
                for (long j = 0; j < hv; j++)
                    acc[j] = _mm256_fmadd_ps(p, _mm256_loadu_ps(vt + 8 * j), acc[j]);
            }
            __m256 inv = _mm256_set1_ps(1.0f / sum);
            for (long j = 0; j < hv; j++)
                _mm256_storeu_ps(og + r * hd + 8 * j, _mm256_mul_ps(acc[j], inv));
        }
        if (sc != small)
            free(sc);
    }
}
