#include "models/nmt/starting_parameters.h"

#include "framework/core/error.h"
#include "models/nmt/model_parts.h"
#include "models/nmt/nmt_task.h"
#include "models/nmt/vocabulary_transfer.h"

namespace luong::nmt {
namespace {

// " (step 1200 of its run)", or " (an averaged model)", which has no trainer state.
std::string steps_of(const StartingPoint& start) {
  return start.step >= 0 ? str(" (step ", start.step, " of its run)") : std::string(" (an averaged model)");
}

// Nearly nothing in common is right for another language and a slip for the same one (other units).
void warn_of_little_in_common(const char* side, const TokenCarry& carry, std::vector<std::string>& lines) {
  const int64_t words = carry.size() - Vocabulary::kNumSpecials, held = carry.carried - Vocabulary::kNumSpecials;
  if (words > 0 && 10 * held <= words)
    lines.push_back(str("warning: train.init_vocabulary = data: ", held, " of this run's ", words, " ", side,
                        " tokens (specials aside) are in the checkpoint's vocabulary, so nearly every ", side,
                        " embedding", side == std::string("target") ? " and output" : "",
                        " entry is new, drawn by model.init (expected for another language; for the same one, are "
                        "the subword units alike?)"));
}

}  // namespace

std::vector<std::string> load_starting_parameters(const StartingPoint& start, NmtModel& model, const Vocabulary& src,
                                                  const Vocabulary& tgt, const StartingParametersOptions& options) {
  LUONG_CHECK(!start.resumed, "load_starting_parameters: a resumed run's parameters are the trainer's to restore");
  std::vector<std::string> lines;
  Checkpoint source = start.checkpoint;  // tensor handles: the refitted entries alone are new storage
  std::string taken;
  if (start.own_vocabularies) {
    const TokenCarry src_carry = carry_tokens(start.run.src_vocab, src),
                     tgt_carry = carry_tokens(start.run.tgt_vocab, tgt);
    source = fit_to_vocabularies(source, start.run.src_vocab.size(), start.run.tgt_vocab.size(), model, src_carry,
                                 tgt_carry);
    taken = str("parameters from ", start.checkpoint.path, steps_of(start), "; this run's vocabularies (",
                options.units, ") take the embedding and output entries of the tokens the checkpoint's hold: source ",
                src_carry.carried, " of ", src_carry.size(), ", target ", tgt_carry.carried, " of ", tgt_carry.size(),
                " (the others drawn by model.init)");
    warn_of_little_in_common("source", src_carry, lines);
    warn_of_little_in_common("target", tgt_carry, lines);
  } else {
    taken = str("parameters, vocabularies and ", options.units, " from ", start.checkpoint.path, steps_of(start));
  }
  StateDict destinations = model_tensors(model);
  const std::set<std::string> skipped = parameters_in_parts("train.init_skip", options.init_skip, model);
  if (!skipped.empty()) {
    drop_skipped(skipped, source, destinations);
    int64_t values = 0;
    for (const auto& [name, v] : model.named_parameters())
      if (skipped.contains(name)) values += v.data().numel();
    taken += str("; ", skipped.size(), " parameter(s) under ", options.init_skip, " (", values,
                 " values) drawn by model.init instead (train.init_skip)");
  }
  load_tensors_into(source, destinations, "model/");
  lines.insert(lines.begin(), "init: " + taken +
                                  "; a new optimizer state, schedule, step count and data position (a resumed run "
                                  "continues its own)");
  return lines;
}

}  // namespace luong::nmt
