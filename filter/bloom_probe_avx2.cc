#include "filter/bloom_probe.h"

#if SIFT_AVX2_DRAWS
#include <immintrin.h>

namespace sift {
namespace internal {

namespace {
bool CpuHasAvx2() {
  // Runs during static initialization, possibly before the runtime has
  // probed the CPU itself.
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
}
}  // namespace

const bool kUseAvx2Draws = CpuHasAvx2();

// The seven 9-bit fields of `fields` become eight 32-bit lanes: two 64-bit
// variable shifts put field i at the bottom of a 64-bit lane, and one shuffle
// keeps each lane's low half. The shuffle leaves the draws in the lane order
// 0 1 4 5 2 3 6 (the eighth lane, bit 63 alone, is never used); the order
// does not matter, since every lane a key needs must be set. The line is
// sixteen 32-bit words: a lane fetches word offset/32 from whichever half of
// the line holds it (two in-register permutes and a blend on bit 3 of the
// word index), shifts bit offset%32 to the sign bit, and one movemask
// gathers the eight answers.
__attribute__((target("avx2"))) bool FirstDrawsSetAvx2(const uint64_t* line,
                                                       uint64_t fields,
                                                       uint32_t num_probes) {
  // Lanes, in the shuffle's order, that hold the first n draws.
  static constexpr uint8_t kLanesOfFirstDraws[8] = {0x00, 0x01, 0x03, 0x13,
                                                    0x33, 0x37, 0x3f, 0x7f};
  const __m256i all = _mm256_set1_epi64x(static_cast<long long>(fields));
  const __m256i low = _mm256_srlv_epi64(all, _mm256_setr_epi64x(0, 9, 18, 27));
  const __m256i high =
      _mm256_srlv_epi64(all, _mm256_setr_epi64x(36, 45, 54, 63));
  const __m256i offsets =
      _mm256_and_si256(_mm256_castps_si256(_mm256_shuffle_ps(
                           _mm256_castsi256_ps(low), _mm256_castsi256_ps(high),
                           _MM_SHUFFLE(2, 0, 2, 0))),
                       _mm256_set1_epi32(511));
  const __m256i word = _mm256_srli_epi32(offsets, 5);  // 0..15
  const __m256i first_half =
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(line));
  const __m256i second_half =
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(line + 4));
  const __m256 words = _mm256_blendv_ps(
      _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(first_half, word)),
      _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(second_half, word)),
      _mm256_castsi256_ps(_mm256_slli_epi32(word, 28)));
  // 31 - offset % 32: the shift that moves the draw's bit to the sign bit.
  const __m256i to_sign = _mm256_andnot_si256(offsets, _mm256_set1_epi32(31));
  const unsigned set =
      static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(
          _mm256_sllv_epi32(_mm256_castps_si256(words), to_sign))));
  const unsigned need = kLanesOfFirstDraws[num_probes < 7 ? num_probes : 7];
  return (set & need) == need;
}

}  // namespace internal
}  // namespace sift

#endif  // SIFT_AVX2_DRAWS
