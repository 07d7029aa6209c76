#include "pickle_vm.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "pickle_ops.h"

namespace torchlint::ckpt {

PickleLimits PickleLimits::for_size(uint64_t size) {
  PickleLimits l;
  // A PUT index costs the memo 4 bytes per slot up to it; real pickles number their memo
  // entries densely, and every memo entry follows an opcode that made its value (MEMOIZE
  // is one byte after at least one more), so no real index exceeds half the size.
  l.max_memo_index = size / 2 + 1024;
  // Nodes are 16 bytes and every opcode makes at most one. A torch checkpoint's graph is
  // about 3.5x its pickle (50 000 tensors with Adam state: 60 MB for 17 MB); 6x leaves
  // room and, with the memo (4 bytes a slot) and the stack, keeps the inspector within
  // 10x the pickle + 64 MB on any input. Past it the run stops with kLimit (TL813).
  l.max_graph_bytes = std::min<uint64_t>(std::max<uint64_t>(32ull << 20, 6 * size), 16ull << 30);
  return l;
}

namespace {

bool valid_utf8(std::string_view s, bool allow_surrogates) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    // Fast path over ASCII, eight bytes at a time.
    while (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      if (w & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= n) break;
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
      return false;
    if (!allow_surrogates && cp >= 0xD800 && cp <= 0xDFFF) return false;
    i += len;
  }
  return true;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A Python int literal as `int(text, 0)` / strtol(base 0) read it. Small values come
// back exactly; larger ones as their minimal little-endian two's-complement bytes when
// the literal is short enough to convert cheaply, else only flagged as big.
__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 i128;

struct ParsedInt {
  bool ok = false;
  bool big = false;
  int64_t value = 0;
  std::string le_bytes;  // for big values with a cheap exact conversion
};

ParsedInt parse_python_int(std::string_view s, bool allow_legacy_octal) {
  ParsedInt r;
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; };
  size_t i = 0, n = s.size();
  while (i < n && is_space(s[i])) ++i;
  while (n > i && is_space(s[n - 1])) --n;
  bool negative = false;
  if (i < n && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  int base = 10;
  if (i + 1 < n && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
    base = 16;
    i += 2;
  } else if (i + 1 < n && s[i] == '0' && (s[i + 1] == 'o' || s[i + 1] == 'O')) {
    base = 8;
    i += 2;
  } else if (i + 1 < n && s[i] == '0' && (s[i + 1] == 'b' || s[i + 1] == 'B')) {
    base = 2;
    i += 2;
  } else if (allow_legacy_octal && i + 1 < n && s[i] == '0') {
    base = 8;  // strtol(base 0) reads "017" as octal
  }
  // Digits, with single underscores between them (Python's literal syntax).
  std::string digits;
  bool last_underscore = true;
  for (; i < n; ++i) {
    char c = s[i];
    if (c == '_') {
      if (last_underscore) return r;
      last_underscore = true;
      continue;
    }
    int d = hex_digit(c);
    if (d < 0 || d >= base) return r;
    digits += static_cast<char>(d);
    last_underscore = false;
  }
  if (digits.empty() || last_underscore) return r;
  // Decimal literals over 4300 digits are refused by CPython (int max str digits).
  if (base == 10 && digits.size() > 4300) return r;
  r.ok = true;
  u128 acc = 0;
  bool overflow = false;
  for (char d : digits) {
    acc = acc * static_cast<unsigned>(base) + static_cast<unsigned>(d);
    if (acc > (static_cast<u128>(1) << 100)) {
      overflow = true;
      break;
    }
  }
  if (!overflow) {
    u128 limit = negative ? (static_cast<u128>(1) << 63) : ((static_cast<u128>(1) << 63) - 1);
    if (acc <= limit) {
      r.value = negative ? static_cast<int64_t>(-static_cast<i128>(acc)) : static_cast<int64_t>(acc);
      return r;
    }
    r.big = true;
    i128 v = negative ? -static_cast<i128>(acc) : static_cast<i128>(acc);
    for (int k = 0; k < 16; ++k) r.le_bytes += static_cast<char>(static_cast<uint8_t>(v >> (8 * k)));
    // Minimal two's complement: drop sign-extension bytes.
    while (r.le_bytes.size() > 1) {
      auto top = static_cast<uint8_t>(r.le_bytes.back());
      auto next = static_cast<uint8_t>(r.le_bytes[r.le_bytes.size() - 2]);
      if ((top == 0 && !(next & 0x80)) || (top == 0xFF && (next & 0x80))) {
        r.le_bytes.pop_back();
      } else {
        break;
      }
    }
    r.value = negative ? INT64_MIN : INT64_MAX;
    return r;
  }
  r.big = true;
  r.value = negative ? INT64_MIN : INT64_MAX;
  return r;
}

class Machine {
 public:
  Machine(Bytes bytes, size_t start, uint64_t base_offset, const PickleLimits& limits)
      : in_(bytes),
        pos_(start),
        base_(base_offset),
        limits_(limits),
        stream_(limits.mode == ReadMode::kStream),
        window_end_(start) {
    run_.graph = std::make_unique<ValueGraph>(bytes);
    if (bytes.size() - std::min(start, bytes.size()) > (1u << 16)) run_.graph->reserve_for(bytes.size() - start);
    run_.start = base_offset + start;
    stack_.reserve(64);
  }

  PickleRun run() {
    while (step()) {
    }
    return std::move(run_);
  }

 private:
  // --- failure -------------------------------------------------------------------------
  bool fail(PickleStatus status, std::string message, size_t at) {
    run_.status = status;
    run_.error = std::move(message);
    run_.error_offset = base_ + at;
    run_.end = base_ + std::min(pos_, in_.size());
    return false;
  }
  bool truncated(std::string_view what) {
    return fail(PickleStatus::kTruncated, "pickle data ends inside " + std::string(what), op_start_);
  }
  bool malformed(std::string message) { return fail(PickleStatus::kMalformed, std::move(message), op_start_); }
  bool underflow() { return malformed("stack underflow at " + std::string(op::name(opcode_))); }

  void hazard(HazardKind kind, std::string detail) {
    for (Hazard& h : run_.hazards) {
      if (h.kind == kind) {
        ++h.count;
        return;
      }
    }
    run_.hazards.push_back({kind, base_ + op_start_, std::move(detail), 1});
  }

  // --- input ---------------------------------------------------------------------------
  // Where a read of `n` bytes starts (see ReadMode): as a stream, a read the buffer
  // cannot satisfy skips the buffer's rest. `window_end_` is the stream's file position.
  size_t read_start(size_t n) {
    if (!stream_ || pos_ >= window_end_ || n <= window_end_ - pos_) return pos_;
    skipped_stream();
    return window_end_;
  }
  void consumed(size_t end) {
    pos_ = end;
    if (pos_ > window_end_) window_end_ = pos_;
  }
  void skipped_stream() {
    if (!run_.stream_skipped) run_.stream_skip_offset = base_ + op_start_;
    run_.stream_skipped = true;
  }
  bool read(size_t n, Bytes& out) {
    size_t at = read_start(n);
    if (n > in_.size() - at) return false;
    out = in_.substr(at, n);
    consumed(at + n);
    return true;
  }
  // readinto: the buffer's rest, then the file; contiguous in both modes.
  bool read_contiguous(size_t n, Bytes& out) {
    if (n > in_.size() - pos_) return false;
    out = in_.substr(pos_, n);
    consumed(pos_ + n);
    return true;
  }
  bool read_le(unsigned width, uint64_t& out) {
    size_t at = read_start(width);
    if (width > in_.size() - at) return false;
    const char* p = in_.data() + at;
    switch (width) {
      case 1:
        out = static_cast<uint8_t>(*p);
        break;
      case 2:
        out = le16(p);
        break;
      case 4:
        out = le32(p);
        break;
      default:
        out = le64(p);
        break;
    }
    consumed(at + width);
    return true;
  }
  // A protocol-0 argument: the text up to (not including) the next newline. As a stream,
  // a line the buffer does not finish is read with readline() from the file position.
  bool readline(Bytes& out) {
    size_t at = pos_;
    if (stream_ && pos_ < window_end_ && !std::memchr(in_.data() + pos_, '\n', window_end_ - pos_)) {
      skipped_stream();
      at = window_end_;
    }
    const void* nl = std::memchr(in_.data() + at, '\n', in_.size() - at);
    if (!nl) return false;
    size_t end = static_cast<size_t>(static_cast<const char*>(nl) - in_.data());
    out = in_.substr(at, end - at);
    consumed(end + 1);
    return true;
  }

  // --- stack ---------------------------------------------------------------------------
  size_t fence() const { return marks_.empty() ? 0 : marks_.back(); }
  void push(ValueId v) { stack_.push_back(v); }
  bool pop(ValueId& v) {
    if (stack_.size() <= fence()) return false;
    v = stack_.back();
    stack_.pop_back();
    return true;
  }
  bool marker(size_t& mark) {
    if (marks_.empty()) return false;
    mark = marks_.back();
    marks_.pop_back();
    return true;
  }
  ValueGraph& g() { return *run_.graph; }
  ValueKind kind_of(ValueId v) const { return run_.graph->node(v).kind; }

  bool memo_put(uint64_t index) {
    if (stack_.size() <= fence()) return underflow();
    if (index > limits_.max_memo_index) {
      return fail(PickleStatus::kLimit,
                  "memo index " + std::to_string(index) + " is out of all proportion to a pickle of " +
                      std::to_string(in_.size()) + " bytes",
                  op_start_);
    }
    if (index >= memo_.size()) memo_.resize(std::max<uint64_t>(index + 1, memo_.size() * 2), kNoValue);
    if (memo_[index] == kNoValue) ++memo_filled_;
    memo_[index] = stack_.back();
    ++run_.memo_puts;
    return true;
  }
  bool memo_get(uint64_t index) {
    if (index >= memo_.size() || memo_[index] == kNoValue) {
      return malformed("memo has no entry " + std::to_string(index) + " (" + std::string(op::name(opcode_)) + ")");
    }
    push(memo_[index]);
    ++run_.memo_gets;
    return true;
  }

  // Parses the decimal index of GET/PUT (protocol 0).
  bool text_index(Bytes line, uint64_t& out) {
    ParsedInt p = parse_python_int(line, false);
    if (!p.ok || p.big) return malformed("bad memo index " + printable(line));
    if (p.value < 0) return malformed("negative memo index in " + std::string(op::name(opcode_)));
    out = static_cast<uint64_t>(p.value);
    return true;
  }

  ValueId make_int(const ParsedInt& p) {
    if (!p.big) return g().add_int(p.value);
    if (!p.le_bytes.empty()) return g().add_big_int(p.le_bytes);
    return g().add_int(p.value, true);
  }

  // Strings decoded with torch.load's encoding="utf-8".
  bool push_decoded_text(Bytes raw, bool verbatim) {
    if (!valid_utf8(raw, false)) return malformed(std::string(op::name(opcode_)) + " holds bytes that are not UTF-8");
    push(verbatim ? g().add_string_view(raw) : g().add_string_owned(std::string(raw)));
    return true;
  }

  bool push_global(Bytes module, Bytes name) {
    if (!valid_utf8(module, false) || !valid_utf8(name, false)) {
      return malformed(std::string(op::name(opcode_)) + " names a module or attribute that is not UTF-8");
    }
    ValueId v = g().add_global(std::string(module), std::string(name));
    run_.globals.push_back({g().node(v).a, base_ + op_start_, opcode_, protocol_});
    push(v);
    return true;
  }

  // Records a call of `callee` with `args`; false when CPython would fail right there.
  bool push_call(CallKind kind, ValueId callee, ValueId args, ValueId kwargs = kNoValue) {
    ValueKind ck = kind_of(callee);
    if (ck == ValueKind::kCall) {
      hazard(HazardKind::kCallOnCallResult, std::string(call_kind_opcode(kind)) + " calls the result of another call");
    } else if (ck == ValueKind::kPersistentRef) {
      hazard(HazardKind::kCallOnPersistent, std::string(call_kind_opcode(kind)) + " calls a persistent object");
    } else if (ck != ValueKind::kGlobal && ck != ValueKind::kExtension) {
      return malformed(std::string(call_kind_opcode(kind)) + " calls a " + std::string(value_kind_name(ck)) +
                       ", which is not callable");
    }
    ValueKind ak = kind_of(args);
    if (ak != ValueKind::kTuple && ak != ValueKind::kCall && ak != ValueKind::kPersistentRef &&
        ak != ValueKind::kExtension) {
      return malformed(std::string(call_kind_opcode(kind)) + " argument list is a " + std::string(value_kind_name(ak)) +
                       ", not a tuple");
    }
    CallRecord rec;
    rec.callee = callee;
    rec.args = args;
    rec.kwargs = kwargs;
    rec.offset = base_ + op_start_;
    rec.kind = kind;
    ValueId v = g().add_call(rec);
    if (ck == ValueKind::kGlobal) {
      const GlobalName& name = g().global_name(g().node(callee).a);
      if (name.module == "collections" || name.module == "builtins" || name.module == "__builtin__") {
        if (name.name == "OrderedDict") {
          g().mark_call(v, ValueGraph::kFlagDictLike | ValueGraph::kFlagOrdered);
        } else if (name.name == "Counter" || name.name == "defaultdict" || name.name == "dict") {
          g().mark_call(v, ValueGraph::kFlagDictLike);
        }
      }
    }
    push(v);
    return true;
  }

  // APPEND(S) / SETITEM(S) / ADDITEMS: the items above `x` go into stack[x - 1].
  bool add_items(size_t x, ValueKind wanted, const char* method) {
    size_t len = stack_.size();
    if (x > len || x <= fence()) return underflow();
    if (len == x) return true;  // nothing to add: CPython does not even look at the target
    if (wanted == ValueKind::kDict && (len - x) % 2 != 0) return malformed("odd number of items for SETITEMS");
    ValueId target = stack_[x - 1];
    const auto& node = g().node(target);
    bool ok = node.kind == wanted ||
              (wanted == ValueKind::kDict && node.kind == ValueKind::kCall && (node.flags & ValueGraph::kFlagDictLike));
    if (!ok) {
      switch (node.kind) {
        case ValueKind::kCall:
        case ValueKind::kGlobal:
        case ValueKind::kPersistentRef:
        case ValueKind::kExtension: {
          std::string what = node.kind == ValueKind::kGlobal
                                 ? "the module-level object " + g().global_name(node.a).qualified()
                                 : std::string(ValueRef(run_.graph.get(), target).describe());
          hazard(HazardKind::kMutateNonContainer, std::string(op::name(opcode_)) + " calls " + method + " on " + what +
                                                      ", not on a " + std::string(value_kind_name(wanted)));
          break;
        }
        default:
          return malformed(std::string(op::name(opcode_)) + " on a " + std::string(value_kind_name(node.kind)) +
                           ", which has no " + method);
      }
    }
    // Containers and objects keep their items; a global, persistent object or extension
    // has nowhere to keep them (its node's payload is its name).
    if (node.kind != ValueKind::kGlobal && node.kind != ValueKind::kPersistentRef &&
        node.kind != ValueKind::kExtension) {
      g().append_items(target, std::span<const ValueId>(stack_.data() + x, len - x));
    }
    stack_.resize(x);
    return true;
  }

  bool push_counted_tuple(size_t n) {
    if (stack_.size() < n) return underflow();
    size_t start = stack_.size() - n;
    if (start < fence()) return underflow();
    ValueId t = g().add_tuple(std::span<const ValueId>(stack_.data() + start, n));
    stack_.resize(start);
    push(t);
    return true;
  }

  bool note_opcode() {
    ++run_.opcodes;
    if (!run_.used.test(opcode_)) {
      run_.used.set(opcode_);
      if (!op::in_torch_subset(opcode_) && !op::name(opcode_).empty()) {
        run_.outside_torch.push_back(opcode_);
        run_.first_offset_outside_torch.push_back(base_ + op_start_);
      }
    }
    if ((run_.opcodes & 0xFFFF) == 0 &&
        run_.graph->memory_bytes() + memo_.size() * 4 + stack_.size() * 4 > limits_.max_graph_bytes) {
      return fail(PickleStatus::kLimit, "the pickle builds more values than its size allows (memory limit)", op_start_);
    }
    return true;
  }

  bool step();

  Bytes in_;
  size_t pos_;
  uint64_t base_;
  PickleLimits limits_;
  PickleRun run_;
  std::vector<ValueId> stack_;
  std::vector<size_t> marks_;
  std::vector<ValueId> memo_;
  uint64_t memo_filled_ = 0;
  size_t frame_end_ = 0;  // 0: no frame open
  bool stream_ = false;
  size_t window_end_ = 0;  // kStream: end of the unpickler's buffer (the file position)
  size_t op_start_ = 0;
  uint8_t opcode_ = 0;
  uint8_t protocol_ = 0;
};

bool Machine::step() {
  // Frames: CPython's C unpickler only checks that a frame's bytes exist; the pure-Python
  // one also refuses opcodes that cross a frame's end. Record the difference.
  if (frame_end_ && pos_ >= frame_end_) frame_end_ = 0;
  op_start_ = pos_;
  if (pos_ >= in_.size()) return fail(PickleStatus::kTruncated, "pickle data ends before STOP", pos_);
  opcode_ = static_cast<uint8_t>(in_[pos_++]);
  if (pos_ > window_end_) window_end_ = pos_;
  if (!note_opcode()) return false;

  bool ok = true;
  Bytes arg;
  uint64_t n = 0;
  ValueId a = kNoValue, b = kNoValue, c = kNoValue;
  size_t mark = 0;

  switch (opcode_) {
    case op::PROTO:
      if (!read_le(1, n)) return truncated("PROTO");
      if (n > 5) return malformed("unsupported pickle protocol " + std::to_string(n));
      if (run_.opcodes > 1)
        run_.proto_not_first = true;
      else
        run_.protocol = static_cast<uint8_t>(n);
      protocol_ = static_cast<uint8_t>(n);
      break;
    case op::FRAME:
      if (!read_le(8, n)) return truncated("FRAME");
      if (stream_ && (pos_ >= window_end_ || n > window_end_ - pos_)) {
        // load_frame reads the frame into the buffer and rewinds to its start: from the
        // file position, so an unfinished earlier buffer is skipped.
        if (pos_ < window_end_) {
          skipped_stream();
          pos_ = window_end_;
        }
        if (n > in_.size() - pos_)
          return fail(PickleStatus::kTruncated,
                      "FRAME of " + std::to_string(n) + " bytes runs past the end of the data", op_start_);
        window_end_ = pos_ + n;
      }
      if (n > in_.size() - pos_)
        return fail(PickleStatus::kTruncated, "FRAME of " + std::to_string(n) + " bytes runs past the end of the data",
                    op_start_);
      if (frame_end_ && op_start_ < frame_end_) {
        run_.frame_straddled = true;
        if (!run_.frame_straddle_offset) run_.frame_straddle_offset = base_ + op_start_;
      }
      frame_end_ = pos_ + n;
      return true;
    case op::STOP:
      if (!pop(a)) return underflow();
      run_.root = a;
      run_.end = base_ + pos_;
      return false;
    case op::MARK:
      marks_.push_back(stack_.size());
      break;
    case op::POP:
      if (!marks_.empty() && marks_.back() == stack_.size()) {
        marks_.pop_back();  // CPython pops a mark sitting on top of the stack
      } else if (!pop(a)) {
        return underflow();
      }
      break;
    case op::POP_MARK:
      if (!marker(mark)) return malformed("POP_MARK without MARK");
      stack_.resize(std::min(mark, stack_.size()));
      break;
    case op::DUP:
      if (stack_.size() <= fence()) return underflow();
      push(stack_.back());
      ++run_.dups;
      break;

    // --- constants ---
    case op::NONE:
      push(ValueGraph::kNoneId);
      break;
    case op::NEWTRUE:
      push(ValueGraph::kTrueId);
      break;
    case op::NEWFALSE:
      push(ValueGraph::kFalseId);
      break;
    case op::INT: {
      if (!readline(arg)) return truncated("INT");
      if (arg == "00" || arg == "01") {
        push(arg == "01" ? ValueGraph::kTrueId : ValueGraph::kFalseId);
        break;
      }
      ParsedInt p = parse_python_int(arg, true);
      if (!p.ok) return malformed("INT argument is not an integer: " + printable(arg));
      push(make_int(p));
      break;
    }
    case op::LONG: {
      if (!readline(arg)) return truncated("LONG");
      if (arg.size() > 1 && arg.back() == 'L') arg.remove_suffix(1);
      ParsedInt p = parse_python_int(arg, false);
      if (!p.ok) return malformed("LONG argument is not an integer: " + printable(arg));
      push(make_int(p));
      break;
    }
    case op::BININT:
      if (!read_le(4, n)) return truncated("BININT");
      push(g().add_int(static_cast<int32_t>(static_cast<uint32_t>(n))));
      break;
    case op::BININT1:
      if (!read_le(1, n)) return truncated("BININT1");
      push(g().add_int(static_cast<int64_t>(n)));
      break;
    case op::BININT2:
      if (!read_le(2, n)) return truncated("BININT2");
      push(g().add_int(static_cast<int64_t>(n)));
      break;
    case op::LONG1:
    case op::LONG4: {
      if (!read_le(opcode_ == op::LONG1 ? 1 : 4, n)) return truncated(op::name(opcode_));
      if (opcode_ == op::LONG4 && static_cast<int32_t>(static_cast<uint32_t>(n)) < 0)
        return malformed("LONG4 with a negative byte count");
      if (!read(n, arg)) return truncated(op::name(opcode_));
      // Minimal two's complement, then int64 when it fits.
      size_t len = arg.size();
      while (len > 1) {
        auto top = static_cast<uint8_t>(arg[len - 1]);
        auto next = static_cast<uint8_t>(arg[len - 2]);
        if ((top == 0 && !(next & 0x80)) || (top == 0xFF && (next & 0x80)))
          --len;
        else
          break;
      }
      if (len <= 8) {
        uint64_t v = 0;
        for (size_t k = 0; k < len; ++k) v |= static_cast<uint64_t>(static_cast<uint8_t>(arg[k])) << (8 * k);
        if (len > 0 && len < 8 && (static_cast<uint8_t>(arg[len - 1]) & 0x80)) v |= ~uint64_t{0} << (8 * len);
        push(g().add_int(static_cast<int64_t>(v)));
      } else if (len <= 64) {
        push(g().add_big_int(std::string(arg.substr(0, len))));
      } else {
        bool negative = static_cast<uint8_t>(arg[len - 1]) & 0x80;
        push(g().add_int(negative ? INT64_MIN : INT64_MAX, true));
      }
      break;
    }
    case op::BINFLOAT:
      if (!read(8, arg)) return truncated("BINFLOAT");
      push(g().add_float(std::bit_cast<double>(be64(arg.data()))));
      break;
    case op::FLOAT: {
      if (!readline(arg)) return truncated("FLOAT");
      if (arg.size() > 512) return malformed("FLOAT argument too long");
      std::string text(arg);
      char* end = nullptr;
      double v = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size())
        return malformed("FLOAT argument is not a number: " + printable(arg));
      push(g().add_float(v));
      break;
    }

    // --- strings ---
    case op::BINUNICODE:
    case op::SHORT_BINUNICODE:
    case op::BINUNICODE8: {
      unsigned width = opcode_ == op::SHORT_BINUNICODE ? 1 : opcode_ == op::BINUNICODE ? 4 : 8;
      if (!read_le(width, n)) return truncated(op::name(opcode_));
      if (!read(n, arg)) return truncated(op::name(opcode_));
      if (!valid_utf8(arg, true)) return malformed(std::string(op::name(opcode_)) + " holds invalid UTF-8");
      push(g().add_string_view(arg));
      break;
    }
    case op::SHORT_BINSTRING:
    case op::BINSTRING: {
      if (!read_le(opcode_ == op::SHORT_BINSTRING ? 1 : 4, n)) return truncated(op::name(opcode_));
      if (opcode_ == op::BINSTRING && static_cast<int32_t>(static_cast<uint32_t>(n)) < 0)
        return malformed("BINSTRING with a negative length");
      if (!read(n, arg)) return truncated(op::name(opcode_));
      if (!push_decoded_text(arg, true)) return false;
      break;
    }
    case op::STRING: {
      if (!readline(arg)) return truncated("STRING");
      while (!arg.empty() && arg.back() == '\r') arg.remove_suffix(1);
      if (arg.size() < 2 || arg.front() != arg.back() || (arg.front() != '\'' && arg.front() != '"')) {
        return malformed("the STRING opcode argument must be quoted");
      }
      Bytes body = arg.substr(1, arg.size() - 2);
      std::string out;
      out.reserve(body.size());
      for (size_t i = 0; i < body.size(); ++i) {
        char ch = body[i];
        if (ch != '\\' || i + 1 >= body.size()) {
          out += ch;
          continue;
        }
        char e = body[++i];
        switch (e) {
          case 'n':
            out += '\n';
            break;
          case 't':
            out += '\t';
            break;
          case 'r':
            out += '\r';
            break;
          case 'a':
            out += '\a';
            break;
          case 'b':
            out += '\b';
            break;
          case 'f':
            out += '\f';
            break;
          case 'v':
            out += '\v';
            break;
          case '\\':
            out += '\\';
            break;
          case '\'':
            out += '\'';
            break;
          case '"':
            out += '"';
            break;
          case '\n':
            break;
          case 'x': {
            int h1 = i + 1 < body.size() ? hex_digit(body[i + 1]) : -1;
            int h2 = i + 2 < body.size() ? hex_digit(body[i + 2]) : -1;
            if (h1 < 0 || h2 < 0) return malformed("STRING has an invalid \\x escape");
            out += static_cast<char>(h1 * 16 + h2);
            i += 2;
            break;
          }
          default:
            if (e >= '0' && e <= '7') {
              int v = e - '0';
              for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k)
                v = v * 8 + (body[++i] - '0');
              out += static_cast<char>(v & 0xFF);
            } else {
              out += '\\';
              out += e;
            }
        }
      }
      if (!valid_utf8(out, false)) return malformed("STRING holds bytes that are not UTF-8");
      push(g().add_string_owned(std::move(out)));
      break;
    }
    case op::UNICODE: {
      if (!readline(arg)) return truncated("UNICODE");
      // raw-unicode-escape: bytes are Latin-1, except \uXXXX and \UXXXXXXXX.
      std::string out;
      out.reserve(arg.size());
      for (size_t i = 0; i < arg.size(); ++i) {
        auto ch = static_cast<uint8_t>(arg[i]);
        if (ch == '\\' && i + 1 < arg.size() && (arg[i + 1] == 'u' || arg[i + 1] == 'U')) {
          size_t digits = arg[i + 1] == 'u' ? 4 : 8;
          if (i + 2 + digits > arg.size()) return malformed("UNICODE has a truncated \\u escape");
          uint32_t cp = 0;
          for (size_t k = 0; k < digits; ++k) {
            int h = hex_digit(arg[i + 2 + k]);
            if (h < 0) return malformed("UNICODE has an invalid \\u escape");
            cp = cp * 16 + static_cast<uint32_t>(h);
          }
          if (cp > 0x10FFFF) return malformed("UNICODE escape beyond U+10FFFF");
          append_utf8(out, cp);
          i += 1 + digits;
        } else {
          append_utf8(out, ch);
        }
      }
      push(g().add_string_owned(std::move(out)));
      break;
    }
    case op::BINBYTES:
    case op::SHORT_BINBYTES:
    case op::BINBYTES8:
    case op::BYTEARRAY8: {
      unsigned width = opcode_ == op::SHORT_BINBYTES ? 1 : opcode_ == op::BINBYTES ? 4 : 8;
      if (!read_le(width, n)) return truncated(op::name(opcode_));
      if (!read_contiguous(n, arg)) return truncated(op::name(opcode_));
      push(g().add_string_view(arg, ValueKind::kBytes));
      break;
    }

    // --- containers ---
    case op::EMPTY_TUPLE:
      push(ValueGraph::kEmptyTupleId);
      break;
    case op::EMPTY_LIST:
      push(g().add_container(ValueKind::kList));
      break;
    case op::EMPTY_DICT:
      push(g().add_container(ValueKind::kDict));
      break;
    case op::EMPTY_SET:
      push(g().add_container(ValueKind::kSet));
      break;
    case op::TUPLE1:
      ok = push_counted_tuple(1);
      break;
    case op::TUPLE2:
      ok = push_counted_tuple(2);
      break;
    case op::TUPLE3:
      ok = push_counted_tuple(3);
      break;
    case op::TUPLE:
    case op::LIST:
    case op::DICT:
    case op::FROZENSET: {
      if (!marker(mark)) return malformed(std::string(op::name(opcode_)) + " without MARK");
      if (mark > stack_.size() || mark < fence()) return underflow();
      std::span<const ValueId> items(stack_.data() + mark, stack_.size() - mark);
      ValueId v;
      if (opcode_ == op::TUPLE) {
        v = g().add_tuple(items);
      } else if (opcode_ == op::DICT) {
        if (items.size() % 2 != 0) return malformed("odd number of items for DICT");
        v = g().add_container_with(ValueKind::kDict, items);
      } else {
        v = g().add_container_with(opcode_ == op::LIST ? ValueKind::kList : ValueKind::kFrozenSet, items);
      }
      stack_.resize(mark);
      push(v);
      break;
    }
    case op::APPEND:
      ok = add_items(stack_.size() - 1, ValueKind::kList, "append");
      break;
    case op::APPENDS:
      if (!marker(mark)) return malformed("APPENDS without MARK");
      ok = add_items(mark, ValueKind::kList, "extend");
      break;
    case op::SETITEM:
      if (stack_.size() < 2) return underflow();
      ok = add_items(stack_.size() - 2, ValueKind::kDict, "__setitem__");
      break;
    case op::SETITEMS:
      if (!marker(mark)) return malformed("SETITEMS without MARK");
      ok = add_items(mark, ValueKind::kDict, "__setitem__");
      break;
    case op::ADDITEMS:
      if (!marker(mark)) return malformed("ADDITEMS without MARK");
      ok = add_items(mark, ValueKind::kSet, "add");
      break;

    // --- memo ---
    case op::PUT:
      if (!readline(arg)) return truncated("PUT");
      ok = text_index(arg, n) && memo_put(n);
      break;
    case op::BINPUT:
      if (!read_le(1, n)) return truncated("BINPUT");
      ok = memo_put(n);
      break;
    case op::LONG_BINPUT:
      if (!read_le(4, n)) return truncated("LONG_BINPUT");
      ok = memo_put(n);
      break;
    case op::MEMOIZE:
      ok = memo_put(memo_filled_);
      break;
    case op::GET:
      if (!readline(arg)) return truncated("GET");
      ok = text_index(arg, n) && memo_get(n);
      break;
    case op::BINGET:
      if (!read_le(1, n)) return truncated("BINGET");
      ok = memo_get(n);
      break;
    case op::LONG_BINGET:
      if (!read_le(4, n)) return truncated("LONG_BINGET");
      ok = memo_get(n);
      break;

    // --- imports ---
    case op::GLOBAL: {
      Bytes module, name;
      if (!readline(module) || !readline(name)) return truncated("GLOBAL");
      ok = push_global(module, name);
      break;
    }
    case op::STACK_GLOBAL: {
      if (!pop(b) || !pop(a)) return underflow();
      ValueKind mk = kind_of(a), nk = kind_of(b);
      if (mk == ValueKind::kString && nk == ValueKind::kString) {
        ok = push_global(g().text(a), g().text(b));
      } else if ((mk == ValueKind::kString || mk == ValueKind::kCall || mk == ValueKind::kPersistentRef ||
                  mk == ValueKind::kExtension) &&
                 (nk == ValueKind::kString || nk == ValueKind::kCall || nk == ValueKind::kPersistentRef ||
                  nk == ValueKind::kExtension)) {
        // The names are computed at load time: whatever they are, this imports them.
        hazard(HazardKind::kDynamicGlobal, "STACK_GLOBAL imports a name computed while loading");
        ValueId v = g().add_global(mk == ValueKind::kString ? std::string(g().text(a)) : "<computed>",
                                   nk == ValueKind::kString ? std::string(g().text(b)) : "<computed>");
        push(v);
      } else {
        return malformed("STACK_GLOBAL requires str operands, got " + std::string(value_kind_name(mk)) + " and " +
                         std::string(value_kind_name(nk)));
      }
      break;
    }
    case op::EXT1:
    case op::EXT2:
    case op::EXT4: {
      unsigned width = opcode_ == op::EXT1 ? 1 : opcode_ == op::EXT2 ? 2 : 4;
      if (!read_le(width, n)) return truncated(op::name(opcode_));
      int64_t code = opcode_ == op::EXT4 ? static_cast<int32_t>(static_cast<uint32_t>(n)) : static_cast<int64_t>(n);
      if (code <= 0) return malformed("EXT specifies code <= 0");
      hazard(HazardKind::kExtensionCode, std::string(op::name(opcode_)) + " imports extension code " +
                                             std::to_string(code) + " from the copyreg registry");
      push(g().add_simple(ValueKind::kExtension));
      break;
    }

    // --- calls ---
    case op::REDUCE:
      if (!pop(b) || !pop(a)) return underflow();
      ok = push_call(CallKind::kReduce, a, b);
      break;
    case op::NEWOBJ:
      if (!pop(b) || !pop(a)) return underflow();
      ok = push_call(CallKind::kNewObj, a, b);
      break;
    case op::NEWOBJ_EX:
      if (!pop(c) || !pop(b) || !pop(a)) return underflow();
      if (kind_of(c) != ValueKind::kDict && kind_of(c) != ValueKind::kCall)
        return malformed("NEWOBJ_EX keyword arguments are not a dict");
      ok = push_call(CallKind::kNewObjEx, a, b, c);
      break;
    case op::OBJ: {
      if (!marker(mark)) return malformed("OBJ without MARK");
      if (stack_.size() < mark + 1 || mark < fence()) return underflow();
      ValueId cls = stack_[mark];
      ValueId args = g().add_tuple(std::span<const ValueId>(stack_.data() + mark + 1, stack_.size() - mark - 1));
      stack_.resize(mark);
      ok = push_call(CallKind::kObj, cls, args);
      break;
    }
    case op::INST: {
      if (!marker(mark)) return malformed("INST without MARK");
      Bytes module, name;
      if (!readline(module) || !readline(name)) return truncated("INST");
      if (mark > stack_.size() || mark < fence()) return underflow();
      ValueId args = g().add_tuple(std::span<const ValueId>(stack_.data() + mark, stack_.size() - mark));
      stack_.resize(mark);
      if (!push_global(module, name)) return false;
      ValueId cls = stack_.back();
      stack_.pop_back();
      ok = push_call(CallKind::kInst, cls, args);
      break;
    }
    case op::BUILD: {
      if (stack_.size() < 2 || stack_.size() - 2 < fence()) return underflow();
      ValueId state = stack_.back();
      stack_.pop_back();
      ValueId inst = stack_.back();
      ValueKind ik = kind_of(inst);
      if (ik == ValueKind::kCall) {
        g().set_call_state(inst, state);
      } else if (ik == ValueKind::kGlobal) {
        hazard(HazardKind::kBuildOnGlobal,
               "BUILD sets attributes of the module-level object " + g().global_name(g().node(inst).a).qualified());
      } else {
        hazard(HazardKind::kBuildOnOther, "BUILD on a " + std::string(value_kind_name(ik)));
      }
      break;
    }

    // --- persistent ids and buffers ---
    case op::PERSID: {
      if (!readline(arg)) return truncated("PERSID");
      for (char ch : arg) {
        if (static_cast<uint8_t>(ch) >= 0x80) return malformed("PERSID argument is not ASCII");
      }
      ValueId pid = g().add_string_view(arg);
      push(g().add_persistent_ref(pid));
      break;
    }
    case op::BINPERSID:
      if (!pop(a)) return underflow();
      push(g().add_persistent_ref(a));
      break;
    case op::NEXT_BUFFER:
      return malformed("NEXT_BUFFER refers to out-of-band data that torch.load never supplies");
    case op::READONLY_BUFFER: {
      if (stack_.size() <= fence()) return underflow();
      ValueKind k = kind_of(stack_.back());
      if (k != ValueKind::kBytes && k != ValueKind::kCall)
        return malformed("READONLY_BUFFER on a " + std::string(value_kind_name(k)));
      hazard(HazardKind::kOutOfBand, "READONLY_BUFFER (protocol 5 buffers are never written by torch.save)");
      break;
    }
    default: {
      char buf[8];
      std::snprintf(buf, sizeof buf, "0x%02x", opcode_);
      return malformed(std::string("invalid opcode ") + buf);
    }
  }
  if (!ok) return false;
  if (frame_end_ && op_start_ < frame_end_ && pos_ > frame_end_) {
    run_.frame_straddled = true;
    if (!run_.frame_straddle_offset) run_.frame_straddle_offset = base_ + op_start_;
  }
  return true;
}

}  // namespace

std::string Hazard::where() const {
  std::string out = " (byte " + std::to_string(offset);
  if (count > 1) out += ", and " + std::to_string(count - 1) + " more like it";
  return out + ")";
}

PickleRun run_pickle(Bytes bytes, size_t start, uint64_t base_offset, const PickleLimits& limits) {
  if (start > bytes.size()) start = bytes.size();
  return Machine(bytes, start, base_offset, limits).run();
}

bool looks_like_pickle(Bytes bytes) {
  if (bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == op::PROTO && static_cast<uint8_t>(bytes[1]) <= 5)
    return true;
  if (bytes.empty() || op::name(static_cast<uint8_t>(bytes[0])).empty()) return false;
  PickleRun run = run_pickle(bytes);
  return run.complete() && run.opcodes >= 2;
}

}  // namespace torchlint::ckpt
