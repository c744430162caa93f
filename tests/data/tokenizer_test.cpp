// Tokenizer: exact tokenisations, joiner placement, and detokenize(tokenize(s)) == s on real-looking text.
#include <gtest/gtest.h>

#include "models/nmt/data/tokenizer.h"
#include "models/nmt/data/utf8.h"
#include "tests/data/test_files.h"

namespace luong::nmt {
namespace {

using Toks = std::vector<std::string>;
const std::string J(kJoiner);

TEST(Tokenizer, SeparatesPunctuationWithJoinersOnThePunctuationSide) {
  Tokenizer t;
  EXPECT_EQ(t.tokenize("Hallo, Welt!"), (Toks{"Hallo", J + ",", "Welt", J + "!"}));
  EXPECT_EQ(t.tokenize("l'homme"), (Toks{"l", J + "'" + J, "homme"}));
  EXPECT_EQ(t.tokenize("(ein Test)"), (Toks{"(" + J, "ein", "Test", J + ")"}));
  EXPECT_EQ(t.tokenize("Warte..."), (Toks{"Warte", J + "..."}));         // a run of one character stays whole
  EXPECT_EQ(t.tokenize("?!"), (Toks{"?" + J, "!"}));                      // different characters are cut
  EXPECT_EQ(t.tokenize("3.5 km"), (Toks{"3", J + "." + J, "5", "km"}));
  EXPECT_EQ(t.tokenize("„Straße“ – Äpfel"), (Toks{"„" + J, "Straße", J + "“", "–", "Äpfel"}));
  EXPECT_EQ(t.tokenize("« Ça va ? »"), (Toks{"«", "Ça", "va", "?", "»"}));
  EXPECT_EQ(t.tokenize("A4-Papier"), (Toks{"A4", J + "-" + J, "Papier"}));
}

TEST(Tokenizer, WhitespaceIsABoundaryAndIsDropped) {
  Tokenizer t;
  EXPECT_EQ(t.tokenize("  zwei\t Hunde \u00a0laufen \n"), (Toks{"zwei", "Hunde", "laufen"}));
  EXPECT_TRUE(t.tokenize("").empty());
  EXPECT_TRUE(t.tokenize(" \t ").empty());
  EXPECT_EQ(t.detokenize(t.tokenize("  zwei\t Hunde  laufen ")), "zwei Hunde laufen");
}

TEST(Tokenizer, RoundTripsRealLookingSentencesExactly) {
  Tokenizer t;
  const char* sentences[] = {
      "Two young, White males are outside near many bushes.",
      "Zwei junge weiße Männer sind im Freien in der Nähe vieler Büsche.",
      "Deux jeunes hommes blancs sont dehors près de buissons.",
      "Un homme âgé, vêtu d'un t-shirt, fait du vélo à côté d'un café.",
      "Ein Mädchen (etwa 5 Jahre alt) spielt mit \"Seifenblasen\" – oder?",
      "Les enfants jouent au football ; l'arbitre siffle !",
      "Größe: 1,80 m; Preis: 12,50 € (inkl. 19 % MwSt.)...",
      "He said: 'it's 10:30 a.m.' -- really?!",
      "Naïve café-crème façon Noël, œuvre d’art «très» réussie.",
      "x",
      "...",
  };
  for (const char* s : sentences) {
    const Toks toks = t.tokenize(s);
    EXPECT_EQ(t.detokenize(toks), s);
    for (const auto& tok : toks) EXPECT_EQ(tok.find(' '), std::string::npos) << tok;
  }
}

TEST(Tokenizer, LowercasesUnicodeLettersWhenAsked) {
  Tokenizer t({.lowercase = true});
  EXPECT_EQ(t.tokenize("ÄRGER Über ÉTÉ, Ŝtono ΣΟΦΙΑ Москва ß"),
            (Toks{"ärger", "über", "été", J + ",", "ŝtono", "σοφια", "москва", "ß"}));
  EXPECT_EQ(t.detokenize(t.tokenize("Zwei Männer, ÉTÉ.")), "zwei männer, été.");
  EXPECT_EQ(utf8_lower("ÀÉÎÕÜ×Ÿ"), "àéîõü×ÿ");
}

TEST(Tokenizer, JoinerInInputIsReplacedSoRoundTripsStayUnambiguous) {
  Tokenizer t;
  const Toks toks = t.tokenize("a" + J + "b");
  EXPECT_EQ(toks, (Toks{"a", J + "\u25a0" + J, "b"}));
  EXPECT_EQ(t.detokenize(toks), "a\u25a0b");
}

TEST(Tokenizer, DetokenizeHandlesModelOutputWithStrayJoiners) {
  Tokenizer t;
  EXPECT_EQ(t.detokenize({"ein", J, "Hund", J + "."}), "einHund.");
  EXPECT_EQ(t.detokenize({J + "Hund", "<unk>", "bellt" + J}), "Hund <unk> bellt");
  EXPECT_EQ(t.detokenize({}), "");
}

TEST(Tokenizer, InvalidUtf8Throws) {
  Tokenizer t;
  EXPECT_ERROR_HAS(t.tokenize("ab\xC3("), "invalid UTF-8 at byte offset 2");
}

TEST(Utf8, EncodesAndDecodesCodePoints) {  // validation: tests/core/utf8_test.cpp
  std::string s;
  for (char32_t c : {U'a', U'ä', U'€', U'😀'}) utf8_append(s, c);
  EXPECT_EQ(s, "aä€😀");
  EXPECT_EQ(utf8_decode(s), (std::vector<char32_t>{U'a', U'ä', U'€', U'😀'}));
}

}  // namespace
}  // namespace luong::nmt
