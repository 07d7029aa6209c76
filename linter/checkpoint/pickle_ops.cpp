#include "pickle_ops.h"

#include <array>

namespace torchlint::ckpt::op {

namespace {

struct Table {
  std::array<std::string_view, 256> names{};
  std::array<bool, 256> torch{};
  Table() {
    auto set = [&](uint8_t code, std::string_view n, bool in_torch = false) {
      names[code] = n;
      torch[code] = in_torch;
    };
    set(MARK, "MARK", true);
    set(STOP, "STOP", true);
    set(POP, "POP");
    set(POP_MARK, "POP_MARK");
    set(DUP, "DUP");
    set(FLOAT, "FLOAT");
    set(INT, "INT");
    set(BININT, "BININT", true);
    set(BININT1, "BININT1", true);
    set(LONG, "LONG");
    set(BININT2, "BININT2", true);
    set(NONE, "NONE", true);
    set(PERSID, "PERSID");
    set(BINPERSID, "BINPERSID", true);
    set(REDUCE, "REDUCE", true);
    set(STRING, "STRING");
    set(BINSTRING, "BINSTRING");
    set(SHORT_BINSTRING, "SHORT_BINSTRING", true);
    set(UNICODE, "UNICODE");
    set(BINUNICODE, "BINUNICODE", true);
    set(APPEND, "APPEND", true);
    set(BUILD, "BUILD", true);
    set(GLOBAL, "GLOBAL", true);
    set(DICT, "DICT");
    set(EMPTY_DICT, "EMPTY_DICT", true);
    set(APPENDS, "APPENDS", true);
    set(GET, "GET");
    set(BINGET, "BINGET", true);
    set(INST, "INST");
    set(LONG_BINGET, "LONG_BINGET", true);
    set(LIST, "LIST");
    set(EMPTY_LIST, "EMPTY_LIST", true);
    set(OBJ, "OBJ");
    set(PUT, "PUT");
    set(BINPUT, "BINPUT", true);
    set(LONG_BINPUT, "LONG_BINPUT", true);
    set(SETITEM, "SETITEM", true);
    set(TUPLE, "TUPLE", true);
    set(EMPTY_TUPLE, "EMPTY_TUPLE", true);
    set(SETITEMS, "SETITEMS", true);
    set(BINFLOAT, "BINFLOAT", true);
    set(PROTO, "PROTO", true);
    set(NEWOBJ, "NEWOBJ", true);
    set(EXT1, "EXT1");
    set(EXT2, "EXT2");
    set(EXT4, "EXT4");
    set(TUPLE1, "TUPLE1", true);
    set(TUPLE2, "TUPLE2", true);
    set(TUPLE3, "TUPLE3", true);
    set(NEWTRUE, "NEWTRUE", true);
    set(NEWFALSE, "NEWFALSE", true);
    set(LONG1, "LONG1", true);
    set(LONG4, "LONG4");
    set(BINBYTES, "BINBYTES");
    set(SHORT_BINBYTES, "SHORT_BINBYTES");
    set(SHORT_BINUNICODE, "SHORT_BINUNICODE");
    set(BINUNICODE8, "BINUNICODE8");
    set(BINBYTES8, "BINBYTES8");
    set(EMPTY_SET, "EMPTY_SET", true);
    set(ADDITEMS, "ADDITEMS");
    set(FROZENSET, "FROZENSET");
    set(NEWOBJ_EX, "NEWOBJ_EX");
    set(STACK_GLOBAL, "STACK_GLOBAL");
    set(MEMOIZE, "MEMOIZE");
    set(FRAME, "FRAME");
    set(BYTEARRAY8, "BYTEARRAY8");
    set(NEXT_BUFFER, "NEXT_BUFFER");
    set(READONLY_BUFFER, "READONLY_BUFFER");
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

std::string_view name(uint8_t opcode) { return table().names[opcode]; }
bool in_torch_subset(uint8_t opcode) { return table().torch[opcode]; }

}  // namespace torchlint::ckpt::op
