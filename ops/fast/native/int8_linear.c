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
 * 8-wide partial sums, one per row. A prefill (M > 1) takes two rows of x per converted weight (four with AVX-512:
 * a batched decode step's rows), as converting is then what costs. Blocks are split over OpenMP threads (the libgomp that PyTorch
 * has already loaded). Built and loaded by ops/fast/native/__init__.py; bench/int8.py measures it.
 * Where the CPU has AVX-512 (checked when the library runs, not when it is built), a decode step and a prefill
 * convert 16 int8 at a time: the 16 bytes of rows r and r + 1 at columns k..k+7, against x[k..k+7] twice. Every lane does
 * the same multiply-adds in the same order as the 8-wide loop, so both give the same bits; on a CPU where 8 at a
 * time converted 10-14 GB/s (a 2-core Xeon, bench/int8.py), converting is what bounded the read. */
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

/* AVX-512: 16 int8 -> 16 float32; a register's two 8-lane halves summed as hsum sums 8 lanes (the rows 2p, 2p + 1) */
#define CVT16(p) _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(p))))

__attribute__((target("avx512f")))
static inline __m512 twice8(const float *x) {              /* x[0..7] in both halves */
    __m512 v = _mm512_castps256_ps512(_mm256_loadu_ps(x));
    return _mm512_shuffle_f32x4(v, v, 0x44);
}

__attribute__((target("avx512f")))
static inline void hsum_halves(__m512 v, float *lo, float *hi) {
    *lo = hsum(_mm512_castps512_ps256(v));
    *hi = hsum(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

/* block1 with AVX-512: zmm p holds rows 2p (low 8 lanes) and 2p + 1 (high 8 lanes), both against x[k..k+7] */
__attribute__((target("avx512f")))
static void block1_512(const float *x, const int8_t *c, long K, float out[R]) {
    long K8 = K - K % 8, T = K % 8;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (long k = 0; k < K8; k += 8, c += 64) {
        __m512 xv = twice8(x + k);
        a0 = _mm512_fmadd_ps(CVT16(c), xv, a0); a1 = _mm512_fmadd_ps(CVT16(c + 16), xv, a1);
        a2 = _mm512_fmadd_ps(CVT16(c + 32), xv, a2); a3 = _mm512_fmadd_ps(CVT16(c + 48), xv, a3);
    }
    __m512 a[4] = {a0, a1, a2, a3};
    for (int p = 0; p < 4; p++)
        hsum_halves(a[p], &out[2 * p], &out[2 * p + 1]);
    for (int r = 0; r < R; r++)
        for (long t = 0; t < T; t++)                           /* K not a multiple of 8 */
            out[r] += c[r * T + t] * x[K8 + t];
}

/* Two blocks at once, 16 lanes wide: 8 sums in flight instead of 4, and each stream prefetched PF bytes ahead;
 * the first block's prefetch, once past its end, goes to the second block of the next pair (the second's runs on
 * into the next pair's first by itself). One core, out of a 512 MB matrix: block1_512 alone 9.6 GB/s, this way
 * 15.1 GB/s at K = 16384 and 13.7 at K = 896, against 14.0 GB/s for a loop that only loads the bytes (2-core
 * Xeon, 480 MB L3). */
#define PF 3072

__attribute__((target("avx512f")))
static void block2_512(const float *x, const int8_t *c, long K, float out[2 * R]) {
    long K8 = K - K % 8, T = K % 8;
    const int8_t *d = c + R * K;                                   /* the next block */
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    for (long k = 0; k < K8; k += 8, c += 64, d += 64) {
        _mm_prefetch((const char *)c + (8 * k + PF < R * K8 ? PF : PF + 2 * R * K), _MM_HINT_T0);
        _mm_prefetch((const char *)d + PF, _MM_HINT_T0);
        __m512 xv = twice8(x + k);
        a0 = _mm512_fmadd_ps(CVT16(c), xv, a0); a1 = _mm512_fmadd_ps(CVT16(c + 16), xv, a1);
        a2 = _mm512_fmadd_ps(CVT16(c + 32), xv, a2); a3 = _mm512_fmadd_ps(CVT16(c + 48), xv, a3);
        b0 = _mm512_fmadd_ps(CVT16(d), xv, b0); b1 = _mm512_fmadd_ps(CVT16(d + 16), xv, b1);
        b2 = _mm512_fmadd_ps(CVT16(d + 32), xv, b2); b3 = _mm512_fmadd_ps(CVT16(d + 48), xv, b3);
    }
    __m512 a[8] = {a0, a1, a2, a3, b0, b1, b2, b3};
    for (int p = 0; p < 8; p++)
        hsum_halves(a[p], &out[2 * p], &out[2 * p + 1]);
    for (int r = 0; r < 2 * R; r++) {
        const int8_t *tail = (r < R ? c : d) + (r % R) * T;
        for (long t = 0; t < T; t++)                               /* K not a multiple of 8 */
            out[r] += tail[t] * x[K8 + t];
    }
}

/* half2 for all 8 rows of a block at once, 16 lanes wide (rows 2p, 2p + 1 per register, as block1_512): two rows
 * of x per converted weight, the same multiply-adds per lane as half2, so the same bits. A prefill's product. */
__attribute__((target("avx512f")))
static void pair_512(const float *x, const float *x1, const int8_t *c, long K, float out[R], float out1[R]) {
    long K8 = K - K % 8, T = K % 8;
    __m512 a[4], b[4];
    for (int p = 0; p < 4; p++)
        a[p] = b[p] = _mm512_setzero_ps();
    for (long k = 0; k < K8; k += 8, c += 64) {
        __m512 xv = twice8(x + k), yv = twice8(x1 + k);
        for (int p = 0; p < 4; p++) {
            __m512 w = CVT16(c + 16 * p);
            a[p] = _mm512_fmadd_ps(w, xv, a[p]);
            b[p] = _mm512_fmadd_ps(w, yv, b[p]);
        }
    }
    for (int p = 0; p < 4; p++) {
        hsum_halves(a[p], &out[2 * p], &out[2 * p + 1]);
        hsum_halves(b[p], &out1[2 * p], &out1[2 * p + 1]);
    }
    for (int r = 0; r < R; r++)
        for (long t = 0; t < T; t++) {                             /* K not a multiple of 8 */
            int8_t v = c[r * T + t];
            out[r] += v * x[K8 + t];
            out1[r] += v * x1[K8 + t];
        }
}

/* pair_512 for four rows of x: each converted weight serves four products (a batched decode step: one row per
 * sequence, B = 4 to 16), the same multiply-adds per lane as block1_512 and pair_512, so the same bits. 16 sums, 4
 * rows of x and the weight fit the 32 registers. */
__attribute__((target("avx512f")))
static void quad_512(const float *x, long K, const int8_t *c, float out[4][R]) {
    long K8 = K - K % 8, T = K % 8;
    __m512 a[4][4];
    for (int m = 0; m < 4; m++)
        for (int p = 0; p < 4; p++)
            a[m][p] = _mm512_setzero_ps();
    for (long k = 0; k < K8; k += 8, c += 64) {
        __m512 xv[4];
        for (int m = 0; m < 4; m++)
            xv[m] = twice8(x + m * K + k);
        for (int p = 0; p < 4; p++) {
            __m512 w = CVT16(c + 16 * p);
            for (int m = 0; m < 4; m++)
                a[m][p] = _mm512_fmadd_ps(w, xv[m], a[m][p]);
        }
    }
    for (int m = 0; m < 4; m++)
        for (int p = 0; p < 4; p++)
            hsum_halves(a[m][p], &out[m][2 * p], &out[m][2 * p + 1]);
    for (int r = 0; r < R; r++)
        for (long t = 0; t < T; t++) {                             /* K not a multiple of 8 */
            int8_t v = c[r * T + t];
            for (int m = 0; m < 4; m++)
                out[m][r] += v * x[m * K + K8 + t];
        }
}

/* 512: the 16-lane functions above (a decode step block2_512 / block1_512, a prefill pair_512); 256: block1 and
 * half2; the default is the widest the CPU has. int8_isa(0) says
 * which runs; int8_isa(256 or 512) asks for one (512 only where the CPU has AVX-512F) and says which runs now. */
static int isa = 0;

int int8_isa(int want) {
    int has512 = __builtin_cpu_supports("avx512f");
    if (want == 512 || want == 256)
        isa = want == 512 && has512 ? 512 : 256;
    else if (!isa)
        isa = has512 ? 512 : 256;
    return isa;
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
    int wide = (isa ? isa : int8_isa(0)) == 512;
    if (wide && M == 1) {                                  /* a decode step: blocks two at a time, then the rest */
        long pairs = blocks / 2;
        #pragma omp parallel for schedule(static)
        for (long i = 0; i <= pairs; i++) {
            long n = 2 * i * R;
            float acc[2 * R];
            if (i < pairs) {
                block2_512(x, p + n * K, K, acc);
                for (int r = 0; r < 2 * R; r++)
                    y[n + r] = acc[r] * s[n + r];
                continue;
            }
            if (blocks % 2) {                              /* one block left over */
                block1_512(x, p + n * K, K, acc);
                for (int r = 0; r < R; r++)
                    y[n + r] = acc[r] * s[n + r];
                n += R;
            }
            for (long r = n; r < N; r++)                   /* rows past the last full block */
                y[r] = row1(x, p + r * K, K) * s[r];
        }
        return;
    }
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
            } else if (m + 3 < M && wide) {                /* four rows of x at a time, 16 lanes */
                float acc[4][R];
                quad_512(xm, K, c, acc);
                for (int j = 0; j < 4; j++)
                    for (int r = 0; r < R; r++)
                        ym[j * N + n + r] = acc[j][r] * s[n + r];
                m += 3;
            } else if (m + 1 < M && wide) {                /* two rows of x at a time (a prefill), 16 lanes */
                float acc[R], acc1[R];
                pair_512(xm, xm + K, c, K, acc, acc1);
                for (int r = 0; r < R; r++) {
                    ym[n + r] = acc[r] * s[n + r];
                    ym[N + n + r] = acc1[r] * s[n + r];
                }
                m++;
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
                if (wide)
                    block1_512(xm, c, K, acc);
                else
                    block1(xm, c, K, acc);
                for (int r = 0; r < R; r++)
                    ym[n + r] = acc[r] * s[n + r];
            }
        }
    }
}
