#include "models/nmt/stored_run.h"

#include "framework/core/error.h"
#include "framework/io/config.h"

namespace luong::nmt {
namespace {

// The list's own errors ("string list does not end with a newline", "a token list must start with <pad> ...")
// do not say where the list came from, so they get the file and the entry.
Vocabulary stored_vocabulary(const Checkpoint& ckpt, const std::string& name) {
  try {
    return Vocabulary::from_tokens(split_string_list(ckpt.state.strings.at(name)));
  } catch (const Error& e) {
    LUONG_FAIL("checkpoint ", ckpt.path, ": '", name, "': ", e.what());
  }
}

}  // namespace

StoredRun read_stored_run(const Checkpoint& ckpt) {
  const auto& strings = ckpt.state.strings;
  if (!strings.count("config") || !strings.count("vocab/src") || !strings.count("vocab/tgt"))
    LUONG_FAIL("checkpoint ", ckpt.path, " has no config or vocabularies: not a luong training checkpoint");
  StoredRun run;
  // The schema without registry validators is enough here: the names were validated when training began.
  const Config config = Config::load_string(nmt_schema(), strings.at("config"), ckpt.path + ":/config");
  run.cfg = nmt_config_from(config);
  run.config_text = config.dump();
  run.src_vocab = stored_vocabulary(ckpt, "vocab/src");
  run.tgt_vocab = stored_vocabulary(ckpt, "vocab/tgt");
  run.subwords = Subwords::load(strings, ckpt.path);
  return run;
}

}  // namespace luong::nmt
