/* What the C kernel of ops/fast/native needs beside its own loops: an AVX2 helper, included by int8_linear.c. */
#pragma once
#include <immintrin.h>

static inline float hsum(__m256 v) {                       /* the 8 lanes of v added up */
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
