// sacreBLEU's default '13a' tokenizer (the mteval-v13a.pl rules) and the Python string semantics BLEU
// depends on (Unicode whitespace, strict UTF-8), re-implemented on UTF-8 byte strings.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace luong::bleu {

// What sacrebleu's Tokenizer13a returns for `line` (which must be valid UTF-8): drops "<skipped>",
// joins "-\n" hyphenation, unescapes &quot; &amp; &lt; &gt;, splits off ASCII punctuation except ' , . -,
// splits '.' and ',' unless between digits, splits '-' after a digit, and collapses whitespace.
std::string tokenize_13a(std::string_view line);

// Python's str.split() (Unicode whitespace, no empty parts) and str.rstrip() on UTF-8 text.
std::vector<std::string> split_whitespace(std::string_view text);
std::string rstrip_whitespace(std::string_view text);

}  // namespace luong::bleu
