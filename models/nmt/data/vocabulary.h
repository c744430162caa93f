// Vocabulary: token <-> id. Ids 0..3 are the specials <pad> <unk> <s> </s>; the rest are the most frequent
// training tokens, ties broken by the token's byte string so the same data always gives the same ids.
// Saved as text (one "token<TAB>count" per line, line i = id i) with the run, and convertible to a plain list of
// strings for checkpoints.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace luong::nmt {

class Vocabulary {
 public:
  static constexpr int64_t kPad = 0, kUnk = 1, kBos = 2, kEos = 3, kNumSpecials = 4;
  static const std::vector<std::string>& specials();  // {"<pad>", "<unk>", "<s>", "</s>"}

  Vocabulary();  // specials only

  // From token counts: keeps tokens with count >= min_freq, most frequent first (ties: byte order of the
  // token), at most max_size entries in total (specials included; max_size <= 0 means no limit).
  static Vocabulary build(const std::unordered_map<std::string, int64_t>& counts, int64_t max_size,
                          int64_t min_freq);
  // Counts tokens of tokenised sentences, then build().
  static Vocabulary build(const std::vector<std::vector<std::string>>& sentences, int64_t max_size,
                          int64_t min_freq);

  // The list form stored in checkpoints: tokens in id order, starting with the four specials.
  static Vocabulary from_tokens(const std::vector<std::string>& tokens);
  std::vector<std::string> to_tokens() const { return tokens_; }

  void save(const std::string& path) const;
  static Vocabulary load(const std::string& path);  // errors name file and line

  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  int64_t id(const std::string& token) const;  // kUnk when absent
  const std::string& token(int64_t id) const;
  int64_t count(int64_t id) const { return counts_.at(static_cast<size_t>(id)); }  // 0 for specials
  bool contains(const std::string& token) const { return index_.count(token) > 0; }

  std::vector<int64_t> encode(const std::vector<std::string>& tokens) const;
  // Stops at </s>; drops <pad> and <s>; keeps <unk> as its text.
  std::vector<std::string> decode(const std::vector<int64_t>& ids) const;

  bool operator==(const Vocabulary& o) const { return tokens_ == o.tokens_; }

 private:
  void push(const std::string& token, int64_t count);

  std::vector<std::string> tokens_;
  std::vector<int64_t> counts_;
  std::unordered_map<std::string, int64_t> index_;
};

}  // namespace luong::nmt
