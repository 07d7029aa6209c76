// Fuzz-style robustness: every seed of every container, truncated at many lengths and
// mutated thousands of times with a fixed-seed generator, goes through the inspector,
// the rules, the summary, the value scan and diff. Nothing may crash or hang, and a file
// that cannot be read completely must say why (TL813). Deterministic, a few seconds.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

#include "checkpoint/diff.h"
#include "seeds.h"
#include "support.h"

using namespace torchlint::ckpt;
using namespace torchlint::ckpt::testing;

namespace {

struct Rng {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  size_t below(size_t n) { return n ? static_cast<size_t>(next() % n) : 0; }
};

std::string mutate(std::string s, Rng& rng) {
  static const uint8_t interesting[] = {0x00, 0xff, 0x7f, 0x80, 0x01, '.', '(', 'R', 'c', 0x93, 0x95, 'P', 'K'};
  int edits = 1 + static_cast<int>(rng.below(4));
  for (int e = 0; e < edits && !s.empty(); ++e) {
    size_t at = rng.below(s.size());
    switch (rng.below(6)) {
      case 0:
        s[at] = static_cast<char>(s[at] ^ (1 << rng.below(8)));
        break;
      case 1:
        s[at] = static_cast<char>(interesting[rng.below(sizeof interesting)]);
        break;
      case 2:
        s.insert(at, 1 + rng.below(8), static_cast<char>(rng.next()));
        break;
      case 3:
        s.erase(at, 1 + rng.below(8));
        break;
      case 4: {  // a 4-byte field set to an extreme value
        uint32_t v = rng.below(2) ? 0xFFFFFFFFu : static_cast<uint32_t>(rng.next());
        if (at + 4 <= s.size()) std::memcpy(s.data() + at, &v, 4);
        break;
      }
      default: {  // duplicate a chunk somewhere else
        size_t from = rng.below(s.size()), len = std::min<size_t>(1 + rng.below(32), s.size() - from);
        s.insert(rng.below(s.size()), s.substr(from, len));
      }
    }
  }
  return s;
}

void exercise(const std::string& bytes, const std::string& name, const Inspected& original) {
  if (std::getenv("TORCHLINT_MUTATION_DUMP"))
    std::ofstream(std::getenv("TORCHLINT_MUTATION_DUMP"), std::ios::binary) << bytes;
  Inspected r = inspect(bytes, name, true);
  if (r.file->fatal()) CHECK_MESSAGE(r.has("TL813"), name << ": fatal without TL813\n" << r.text());
  TrainingState t = analyze_training_state(r.checkpoint);
  std::string summary = render_summary(r.checkpoint, t, {});
  CHECK(!summary.empty());
  CheckpointDiff d = diff_checkpoints(*original.file, *r.file, true);
  (void)render_diff(d, "a", "b", false);
}

}  // namespace

TEST_CASE("truncated and mutated inputs of every container never crash") {
  auto start = std::chrono::steady_clock::now();
  Rng rng;
  size_t runs = 0;
  for (const auto& [name, seed] : seed_inputs()) {
    CAPTURE(name);
    Inspected original = inspect(seed, name, true);
    CHECK_MESSAGE(!original.file->fatal(), name << " seed is broken:\n" << original.text());
    size_t step = std::max<size_t>(1, seed.size() / 300);
    for (size_t n = 0; n < seed.size(); n += step, ++runs) exercise(seed.substr(0, n), name, original);
    for (int i = 0; i < 8000; ++i, ++runs) exercise(mutate(seed, rng), name, original);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE(runs << " mutated inputs in " << seconds << " s");
  CHECK(seconds < 60);
}
