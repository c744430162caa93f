// A reversible word/punctuation tokenizer with joiner marks, in the spirit of OpenNMT's "aggressive" mode
// with joiner annotation.
//
// tokenize(text):
//   1. (optional) lowercase with utf8_lower (see utf8.h for which letters are mapped);
//   2. split on whitespace: ASCII space, tab, CR, LF, VT, FF, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029,
//      U+202F, U+205F, U+3000. Whitespace is dropped; runs of it count as one boundary;
//   3. inside each whitespace-free chunk, cut between a word run and a punctuation run, and between two
//      different punctuation characters. A word run is a maximal run of "word" code points: ASCII letters and
//      digits and every non-ASCII code point that is not listed as punctuation below (so umlauts, accents,
//      combining marks, CJK ideographs stay inside words). A punctuation run is a maximal run of one repeated
//      punctuation character ("...", "!!", "--"). Punctuation = ASCII printable non-alphanumerics, control
//      characters, U+00A1..U+00BF except ª µ º, × ÷, U+2010..U+2027, U+2030..U+205E (dashes, quotes „“”‘’,
//      …, ‰), U+20A0..U+20CF (currency), U+2190..U+2BFF (arrows, maths, shapes), U+3001..U+303F, fullwidth
//      ASCII punctuation, U+1F000..U+1FAFF (emoji);
//   4. mark each cut with the joiner "￭" (U+FFED), always on the punctuation side: a punctuation piece that
//      was glued to the piece on its left gets a leading joiner, one glued to the piece on its right gets a
//      trailing joiner. "Hallo, Welt!" -> [Hallo, ￭,, Welt, ￭!]; "l'homme" -> [l, ￭'￭, homme];
//   5. with a BPE (bpe.h), split each word token into subword pieces, a joiner after every piece but the last:
//      "Schwimmbrille" -> [Schwimm￭, brille].
//   A U+FFED already in the input is replaced by U+25A0 "■" (the joiner is reserved).
//
// detokenize(tokens): concatenates tokens, inserting one ASCII space between two tokens unless the left one
// ends with the joiner or the right one starts with it, then removes the joiners.
//
// Guarantee: detokenize(tokenize(s)) == s for every valid UTF-8 string s without U+FFED whose whitespace is
// single ASCII spaces with none at either end (e.g. every Multi30k line). Other whitespace comes back as single
// spaces; lowercasing is of course not undone.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace luong::nmt {

inline constexpr std::string_view kJoiner = "\xEF\xBF\xAD";  // U+FFED HALFWIDTH BLACK SQUARE

struct TokenizerOptions {
  bool lowercase = false;
};

class Bpe;

class Tokenizer {
 public:
  explicit Tokenizer(TokenizerOptions options = {}, std::shared_ptr<const Bpe> bpe = nullptr)
      : options_(options), bpe_(std::move(bpe)) {}
  // Throws luong::Error on invalid UTF-8 (the corpus reader validates earlier, naming file and line).
  std::vector<std::string> tokenize(std::string_view text) const;
  // With `spans`, also the bytes of the result that each token became: (*spans)[i] = [begin, end), empty for
  // a lone joiner (word alignments map tokens to the words of the text through them).
  std::string detokenize(const std::vector<std::string>& tokens,
                         std::vector<std::pair<size_t, size_t>>* spans = nullptr) const;
  const TokenizerOptions& options() const { return options_; }
  // The subword encoding applied after word tokenisation (null: words).
  const std::shared_ptr<const Bpe>& bpe() const { return bpe_; }

 private:
  TokenizerOptions options_;
  std::shared_ptr<const Bpe> bpe_;
};

// Classification used by the tokenizer (exposed for tests).
bool is_space_char(char32_t cp);
bool is_punct_char(char32_t cp);

}  // namespace luong::nmt
