/* int8 weight-only linear for x86-64 CPUs with AVX2 and FMA: y (M, N) = (x (M, K) . q (N, K)^T) * s (N).
 *
 * x: float32 activations, q: int8 weight rows (one row per output), s: float32 scale of each row.
 * Decoding (M = 1) reads every weight byte once, so the loop is written for that: four weight rows share each
 * load of x; 8 int8 at a time become 8 float32 in registers (no float copy of W is ever written) and are
 * multiplied into 8-wide partial sums; the next four rows are prefetched while these are summed. A prefill
 * (M > 1) takes two rows of x per converted weight (rows4x2), as converting is then what costs. Blocks of rows
 * are split over OpenMP threads (the libgomp that PyTorch has already loaded). Built and loaded by
 * ops/native/__init__.py; bench/int8.py measures it. */
#include <immintrin.h>
#include <stdint.h>

static inline float hsum(__m256 v) {                       /* the 8 lanes of v added up */
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline __m256 load8(const int8_t *p) {             /* 8 int8 -> 8 float32 */
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

static void rows4(const float *x, const int8_t *q, long K, float out[4]) {
    const int8_t *q0 = q, *q1 = q + K, *q2 = q + 2 * K, *q3 = q + 3 * K;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    long k = 0;
    for (; k + 8 <= K; k += 8) {
        if ((k & 63) == 0) {      /* a row of the model is short (896 bytes): ask for the next block's lines now */
            _mm_prefetch((const char *)(q0 + 4 * K + k), _MM_HINT_T0);     /* (past the end: a prefetch never faults) */
            _mm_prefetch((const char *)(q1 + 4 * K + k), _MM_HINT_T0);
            _mm_prefetch((const char *)(q2 + 4 * K + k), _MM_HINT_T0);
            _mm_prefetch((const char *)(q3 + 4 * K + k), _MM_HINT_T0);
        }
        __m256 xv = _mm256_loadu_ps(x + k);
        a0 = _mm256_fmadd_ps(load8(q0 + k), xv, a0);
        a1 = _mm256_fmadd_ps(load8(q1 + k), xv, a1);
        a2 = _mm256_fmadd_ps(load8(q2 + k), xv, a2);
        a3 = _mm256_fmadd_ps(load8(q3 + k), xv, a3);
    }
    out[0] = hsum(a0); out[1] = hsum(a1); out[2] = hsum(a2); out[3] = hsum(a3);
    for (; k < K; k++) {                                   /* K not a multiple of 8 */
        out[0] += q0[k] * x[k]; out[1] += q1[k] * x[k]; out[2] += q2[k] * x[k]; out[3] += q3[k] * x[k];
    }
}

static void rows4x2(const float *x, const float *x1, const int8_t *q, long K, float out[4], float out1[4]) {
    /* two rows of x against the same four weight rows: each converted weight serves two products */
    const int8_t *q0 = q, *q1 = q + K, *q2 = q + 2 * K, *q3 = q + 3 * K;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    long k = 0;
    for (; k + 8 <= K; k += 8) {
        __m256 xv = _mm256_loadu_ps(x + k), yv = _mm256_loadu_ps(x1 + k);
        __m256 w0 = load8(q0 + k), w1 = load8(q1 + k), w2 = load8(q2 + k), w3 = load8(q3 + k);
        a0 = _mm256_fmadd_ps(w0, xv, a0); b0 = _mm256_fmadd_ps(w0, yv, b0);
        a1 = _mm256_fmadd_ps(w1, xv, a1); b1 = _mm256_fmadd_ps(w1, yv, b1);
        a2 = _mm256_fmadd_ps(w2, xv, a2); b2 = _mm256_fmadd_ps(w2, yv, b2);
        a3 = _mm256_fmadd_ps(w3, xv, a3); b3 = _mm256_fmadd_ps(w3, yv, b3);
    }
    out[0] = hsum(a0); out[1] = hsum(a1); out[2] = hsum(a2); out[3] = hsum(a3);
    out1[0] = hsum(b0); out1[1] = hsum(b1); out1[2] = hsum(b2); out1[3] = hsum(b3);
    for (; k < K; k++) {
        out[0] += q0[k] * x[k]; out[1] += q1[k] * x[k]; out[2] += q2[k] * x[k]; out[3] += q3[k] * x[k];
        out1[0] += q0[k] * x1[k]; out1[1] += q1[k] * x1[k]; out1[2] += q2[k] * x1[k]; out1[3] += q3[k] * x1[k];
    }
}

static float row1(const float *x, const int8_t *q, long K) {
    float a = 0.f;
    for (long k = 0; k < K; k++)
        a += q[k] * x[k];
    return a;
}

void int8_linear(const float *x, const int8_t *q, const float *s, float *y, long M, long N, long K) {
    long blocks = (N + 3) / 4;
    #pragma omp parallel for schedule(static)
    for (long b = 0; b < blocks; b++) {
        long n = 4 * b;
        for (long m = 0; m < M; m++) {
            const float *xm = x + m * K;
            float *ym = y + m * N;
            if (n + 4 <= N && m + 1 < M) {                 /* two rows of x at a time (a prefill) */
                float acc[4], acc1[4];
                rows4x2(xm, xm + K, q + n * K, K, acc, acc1);
                for (int r = 0; r < 4; r++) {
                    ym[n + r] = acc[r] * s[n + r];
                    ym[N + n + r] = acc1[r] * s[n + r];
                }
                m++;
            } else if (n + 4 <= N) {
                float acc[4];
                rows4(xm, q + n * K, K, acc);
                for (int r = 0; r < 4; r++)
                    ym[n + r] = acc[r] * s[n + r];
            } else {                                       /* the last 1-3 rows */
                for (long r = n; r < N; r++)
                    ym[r] = row1(xm, q + r * K, K) * s[r];
            }
        }
    }
}
