// JSON records with strings that are not UTF-8: written with U+FFFD in their place, never an exception after
// the work the record describes is done (a finished run's summary line, a sweep trial's result).
#include "framework/io/json_text.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace luong {
namespace {

TEST(JsonText, BytesThatAreNotUtf8BecomeTheReplacementCharacter) {
  const nlohmann::json j{{"resumed_from", "/runs/caf\xE9/ckpt-6.h5"}, {"steps", 6}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);  // what every record did before
  const std::string text = json_text(j);
  EXPECT_EQ(text, "{\"resumed_from\":\"/runs/caf\xEF\xBF\xBD/ckpt-6.h5\",\"steps\":6}");
  EXPECT_EQ(nlohmann::json::parse(text)["steps"], 6);
}

TEST(JsonText, Utf8StaysAsItIsAndIndentIsKept) {
  const nlohmann::json j{{"src", "/data/Grüße 😀.de"}};
  EXPECT_EQ(json_text(j), j.dump());
  EXPECT_EQ(json_text(j, 2), j.dump(2));
  EXPECT_EQ(nlohmann::json::parse(json_text(j))["src"], "/data/Grüße 😀.de");
}

}  // namespace
}  // namespace luong
