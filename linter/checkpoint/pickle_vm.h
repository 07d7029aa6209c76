#pragma once
// A pickle machine that executes nothing. It runs every opcode of protocols 0-5 with the
// semantics of CPython's C unpickler (the one torch.load uses): a real value stack, the
// mark stack with its fence, the memo holding references to real stack values, frames,
// persistent ids. Where CPython would import a module it records a global name; where it
// would call something it records a call; the result is a ValueGraph.
//
// Everything a loader would do that can run code is also recorded as it happens, with its
// offset, for the policy: every global named, every call, and the constructs that are
// dangerous whatever the names (a computed STACK_GLOBAL, EXT codes, BUILD on a module
// global, calling a call's result, SETITEM/APPEND on something that is not a container).
//
// Cost is linear in the pickle's size: each opcode consumes at least one byte, no opcode
// copies more than the stack items it consumes, and strings are views into the input.
// Limits (memo indices, graph memory) scale with that size, so a benign 6 M-opcode
// checkpoint runs and a hostile 1 KB pickle cannot ask for gigabytes.
#include <bitset>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bytes.h"
#include "value_graph.h"

namespace torchlint::ckpt {

// How the unpickler receives the bytes. CPython's C unpickler reads a buffer (pickle.loads)
// contiguously; reading a file object without `peek` (torch.load's io.BytesIO of a zip
// record) it holds one buffer at a time: a FRAME's bytes, or exactly what the last read
// asked for. A read that the buffer cannot satisfy goes to the file, which is positioned
// past the buffer's end, so what was left of the frame is skipped. Bytes payloads
// (BINBYTES*, BYTEARRAY8) are read with readinto, which takes the buffer's rest first and
// stays contiguous. Pickles that never cross a frame's end read the same either way.
enum class ReadMode : uint8_t { kBuffer, kStream };

struct PickleLimits {
  uint64_t max_memo_index = 0;   // highest memo index a PUT may use
  uint64_t max_graph_bytes = 0;  // memory the value graph may take
  ReadMode mode = ReadMode::kBuffer;
  // Limits for a pickle of `size` bytes.
  static PickleLimits for_size(uint64_t size);
};

// Constructs that can run code whatever the names involved.
enum class HazardKind : uint8_t {
  kDynamicGlobal,       // STACK_GLOBAL whose operands are computed, not literal strings
  kExtensionCode,       // EXT1/EXT2/EXT4: an import through the copyreg registry
  kBuildOnGlobal,       // BUILD on a module-level object: sets attributes in a module
  kCallOnCallResult,    // calling what a call returned (`getattr(...)(...)`)
  kCallOnPersistent,    // calling what persistent_load returned
  kMutateNonContainer,  // APPEND(S)/SETITEM(S)/ADDITEMS on something that is not a literal container
  kBuildOnOther,        // BUILD on a value torch never builds (weights_only refuses it)
  kOutOfBand,           // NEXT_BUFFER / READONLY_BUFFER
};

// The first hazard of its kind; later ones of the same kind are only counted, so that a
// pickle of 10^6 BUILD opcodes costs one record, not 10^6.
struct Hazard {
  HazardKind kind;
  uint64_t offset;  // absolute offset in the file (of the first one)
  std::string detail;
  uint64_t count = 1;  // how many times the pickle does it
  // " (byte N)" or " (byte N, and 999,999 more like it)"
  std::string where() const;
};

// One GLOBAL / STACK_GLOBAL / INST.
struct GlobalUse {
  uint32_t global = 0;  // index in the graph's global table
  uint64_t offset = 0;
  uint8_t opcode = 0;
  uint8_t protocol = 0;  // PROTO in force (py2 name mapping below 3, dotted names from 4)
};

enum class PickleStatus : uint8_t { kComplete, kTruncated, kMalformed, kLimit };

struct PickleRun {
  std::unique_ptr<ValueGraph> graph;
  ValueId root = kNoValue;  // what STOP returned
  uint64_t start = 0;       // absolute offsets in the file
  uint64_t end = 0;         // just past STOP, or where the run stopped
  PickleStatus status = PickleStatus::kComplete;
  std::string error;  // what went wrong, for a status other than kComplete
  uint64_t error_offset = 0;
  uint8_t protocol = 0;  // the first PROTO's argument (0 without one)
  uint64_t opcodes = 0;
  std::bitset<256> used;                             // every opcode seen
  std::vector<uint64_t> first_offset_outside_torch;  // parallel to `outside_torch`
  std::vector<uint8_t> outside_torch;                // opcodes outside the torch.save subset, first-seen order
  std::vector<GlobalUse> globals;
  std::vector<Hazard> hazards;
  bool frame_straddled = false;  // an opcode crossed a FRAME end (pure-Python pickle refuses)
  uint64_t frame_straddle_offset = 0;
  // kStream: a read crossed the end of the stream buffer and skipped the frame's rest
  // (the bytes a buffer reader would have used instead).
  bool stream_skipped = false;
  uint64_t stream_skip_offset = 0;
  bool proto_not_first = false;
  uint64_t memo_gets = 0, memo_puts = 0, dups = 0;

  bool complete() const { return status == PickleStatus::kComplete; }
  ValueRef root_ref() const { return {graph.get(), root}; }
};

// Runs one pickle that starts at `bytes[start]`. `base_offset` is added to every offset
// reported (the position of `bytes` in the file). `encoding_utf8`: decode py2 strings
// as torch.load does (encoding="utf-8").
PickleRun run_pickle(Bytes bytes, size_t start, uint64_t base_offset, const PickleLimits& limits);
inline PickleRun run_pickle(Bytes bytes, size_t start = 0, uint64_t base_offset = 0) {
  return run_pickle(bytes, start, base_offset, PickleLimits::for_size(bytes.size() - std::min(start, bytes.size())));
}

// Whether `bytes` plausibly starts a pickle: PROTO 2-5, or a protocol 0/1 pickle that
// runs to STOP. Used by container sniffing and to decide which zip members are pickles.
bool looks_like_pickle(Bytes bytes);

}  // namespace torchlint::ckpt
