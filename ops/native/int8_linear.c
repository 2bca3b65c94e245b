/* int8 weight-only linear for x86-64 CPUs with AVX2 and FMA: y (M, N) = (x (M, K) . q (N, K)^T) * s (N).
 *
 * x: float32 activations, q: int8 weights, s: float32 scale of each output row.
 * Decoding (M = 1) reads every weight byte once, so the weights are stored for that read: in blocks of 8 rows.
 * A block holds, for k = 0, 8, 16, ..., bytes k..k+7 of its row 0, then of row 1, ..., of row 7: 64 bytes, one
 * cache line, per step of 8 columns; then the K % 8 last bytes of each row. A block takes the same 8 K bytes as
 * its 8 rows in row order, so only bytes inside a block move; rows past the last full block stay in row order.
 * A thread then reads one sequential stream, which the hardware prefetcher follows; in row order the eight
 * 896-byte rows of a block are eight short streams, and the same product ran at half the speed (bench/int8.py).
 * Each 8 int8 become 8 float32 in registers (no float copy of W is ever written) and are multiplied into
 * 8-wide partial sums, one per row. A prefill (M > 1) takes two rows of x per converted weight, four weight rows
 * at a time, as converting is then what costs. Blocks are split over OpenMP threads (the libgomp that PyTorch
 * has already loaded). Built and loaded by ops/native/__init__.py; bench/int8.py measures it. */
#include <stdint.h>
#include <string.h>

#include "simd.h"

#define R 8                                                /* rows per block */

static inline __m256 load8(const int8_t *p) {             /* 8 int8 -> 8 float32 */
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

/* Block b's bytes: steps of 64 (8 columns of its 8 rows) first, then the K % 8 tail columns row by row. Moved
 * 8 bytes at a time, blocks split over threads: the int8 set is packed once, as it is built. */
void int8_pack(const int8_t *q, int8_t *p, long N, long K) {            /* row order -> blocks */
    long full = N - N % R, K8 = K - K % 8, T = K % 8;
    #pragma omp parallel for schedule(static)
    for (long b = 0; b < full; b += R)
        for (long r = 0; r < R; r++) {
            const int8_t *row = q + (b + r) * K;
            for (long k = 0; k < K8; k += 8)
                memcpy(p + b * K + k * R + r * 8, row + k, 8);
            memcpy(p + b * K + K8 * R + r * T, row + K8, (size_t)T);
        }
    memcpy(p + full * K, q + full * K, (size_t)((N - full) * K));      /* rows past the last block */
}

void int8_unpack(const int8_t *p, int8_t *q, long N, long K) {          /* blocks -> row order */
    long full = N - N % R, K8 = K - K % 8, T = K % 8;
    #pragma omp parallel for schedule(static)
    for (long b = 0; b < full; b += R)
        for (long r = 0; r < R; r++) {
            int8_t *row = q + (b + r) * K;
            for (long k = 0; k < K8; k += 8)
                memcpy(row + k, p + b * K + k * R + r * 8, 8);
            memcpy(row + K8, p + b * K + K8 * R + r * T, (size_t)T);
        }
    memcpy(q + full * K, p + full * K, (size_t)((N - full) * K));
}

static void block1(const float *x, const int8_t *c, long K, float out[R]) {
    /* one row of x against one block: 8 sums, each 8 lanes wide, fed by one 64-byte line per step */
    long K8 = K - K % 8, T = K % 8;
    __m256 a[R];
    for (int r = 0; r < R; r++)
        a[r] = _mm256_setzero_ps();
    for (long k = 0; k < K8; k += 8, c += 64) {
        __m256 xv = _mm256_loadu_ps(x + k);
        for (int r = 0; r < R; r++)
            a[r] = _mm256_fmadd_ps(load8(c + 8 * r), xv, a[r]);
    }
    for (int r = 0; r < R; r++) {
        out[r] = hsum(a[r]);
        for (long t = 0; t < T; t++)                       /* K not a multiple of 8 */
            out[r] += c[r * T + t] * x[K8 + t];
    }
}

static void half2(const float *x, const float *x1, const int8_t *c, long K, int h, float out[4], float out1[4]) {
    /* two rows of x against rows 4h..4h+3 of one block: each converted weight serves two products */
    long K8 = K - K % 8, T = K % 8;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    const int8_t *w = c + 32 * h;
    for (long k = 0; k < K8; k += 8, w += 64) {
        __m256 xv = _mm256_loadu_ps(x + k), yv = _mm256_loadu_ps(x1 + k);
        __m256 w0 = load8(w), w1 = load8(w + 8), w2 = load8(w + 16), w3 = load8(w + 24);
        a0 = _mm256_fmadd_ps(w0, xv, a0); b0 = _mm256_fmadd_ps(w0, yv, b0);
        a1 = _mm256_fmadd_ps(w1, xv, a1); b1 = _mm256_fmadd_ps(w1, yv, b1);
        a2 = _mm256_fmadd_ps(w2, xv, a2); b2 = _mm256_fmadd_ps(w2, yv, b2);
        a3 = _mm256_fmadd_ps(w3, xv, a3); b3 = _mm256_fmadd_ps(w3, yv, b3);
    }
    out[0] = hsum(a0); out[1] = hsum(a1); out[2] = hsum(a2); out[3] = hsum(a3);
    out1[0] = hsum(b0); out1[1] = hsum(b1); out1[2] = hsum(b2); out1[3] = hsum(b3);
    const int8_t *tail = c + K8 * R;
    for (int r = 0; r < 4; r++)
        for (long t = 0; t < T; t++) {
            int8_t v = tail[(4 * h + r) * T + t];
            out[r] += v * x[K8 + t];
            out1[r] += v * x1[K8 + t];
        }
}

static float row1(const float *x, const int8_t *q, long K) {
    float a = 0.f;
    for (long k = 0; k < K; k++)
        a += q[k] * x[k];
    return a;
}

void int8_linear(const float *x, const int8_t *p, const float *s, float *y, long M, long N, long K) {
    long full = N - N % R, blocks = full / R;
    #pragma omp parallel for schedule(static)
    for (long b = 0; b <= blocks; b++) {                   /* b == blocks: the rows past the last full block */
        long n = b * R;
        const int8_t *c = p + n * K;
        for (long m = 0; m < M; m++) {
            const float *xm = x + m * K;
            float *ym = y + m * N;
            if (b == blocks) {
                for (long r = n; r < N; r++)
                    ym[r] = row1(xm, p + r * K, K) * s[r];
            } else if (m + 1 < M) {                        /* two rows of x at a time (a prefill) */
                for (int h = 0; h < 2; h++) {
                    float acc[4], acc1[4];
                    half2(xm, xm + K, c, K, h, acc, acc1);
                    for (int r = 0; r < 4; r++) {
                        ym[n + 4 * h + r] = acc[r] * s[n + 4 * h + r];
                        ym[N + n + 4 * h + r] = acc1[r] * s[n + 4 * h + r];
                    }
                }
                m++;
            } else {
                float acc[R];
                block1(xm, c, K, acc);
                for (int r = 0; r < R; r++)
                    ym[n + r] = acc[r] * s[n + r];
            }
        }
    }
}
