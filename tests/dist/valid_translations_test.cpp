// train.valid_translations' file (models/nmt/valid_translations.h): each rank's share of the lines (every
// world-th) interleaved back into the set's order, empty translations included (one as the last line), and no
// share file left. Run as one process and under mpirun -np 2 (dist_support.h).
#include "models/nmt/valid_translations.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/dist/dist_support.h"

namespace luong::testing {
namespace {

TEST(ValidTranslations, TheRanksSharesAreInterleavedIntoTheSetsOrder) {
  auto group = make_test_group();
  const std::vector<std::string> lines{"ein Hund", "zwei", "", "drei Katzen .", "vier", "f\xc3\xbcnf", ""};
  const size_t world = static_cast<size_t>(group->size()), rank = static_cast<size_t>(group->rank());
  std::vector<std::string> share;
  for (size_t i = rank; i < lines.size(); i += world) share.push_back(lines[i]);
  // The same directory on every rank (a run directory is shared by the job's processes).
  const std::string dir =
      (std::filesystem::temp_directory_path() /
       ("luong_valid_translations_" + std::to_string(group->all_gather(rank == 0 ? ::getpid() : 0)[0])))
          .string();
  nmt::write_valid_translations(*group, dir, 120, share, lines.size());
  group->barrier();  // rank 0 writes the file after the others have left the call
  std::ifstream in(nmt::valid_translations_path(dir, 120));
  std::stringstream text;
  text << in.rdbuf();
  std::string expected;
  for (const std::string& l : lines) expected += l + "\n";
  EXPECT_EQ(text.str(), expected);
  EXPECT_EQ(nmt::valid_translations_path(dir, 120), dir + "/step-120.txt");
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u) << "the share files are removed";
  group->barrier();  // every rank has read it
  if (rank == 0) std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace luong::testing
