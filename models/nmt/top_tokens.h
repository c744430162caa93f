// The best tokens of one decoder step's log-probabilities: greedy decoding takes the best one, beam search
// each beam's best 2K. One ranking (ties to the lower token id) and one error for a diverged model.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace luong::nmt {

// Fills `out` with the `count` best (log-probability, token) pairs of row[0 .. V), best first; equal values
// keep the lower token id first, so count = 1 is the first maximum. A NaN anywhere in the row is an error
// naming `decoder`, the output step and the sentence: NaN has no place in a ranking, and it means the
// checkpoint's parameters are not finite. Tokens in `excluded` are never returned (the decoders pass <pad>
// and <s>, which are not outputs: see never_output_tokens), as if their log-probability were -inf.
void top_tokens(const float* row, int64_t V, size_t count, std::vector<std::pair<float, int64_t>>& out,
                const char* decoder, int64_t step, int64_t sentence, const std::vector<int64_t>& excluded = {});

// The error of a decoder that met a NaN log-probability (`has_nan`) at `step` of `sentence`: top_tokens' and
// the sampler's full-vocabulary scan's.
void require_no_nan(bool has_nan, const char* decoder, int64_t step, int64_t sentence);

// The tokens a decoder must never emit: <pad> (`pad_id`) and <s> (`bos`). A weakly trained model can rank
// either first, and an output "<s>" would then appear literally in the 1-best text.
std::vector<int64_t> never_output_tokens(int64_t pad_id, int64_t bos);

}  // namespace luong::nmt
