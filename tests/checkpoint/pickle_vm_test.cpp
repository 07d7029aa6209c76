// The pickle machine: CPython's semantics for every opcode, without calling anything.
#include <doctest/doctest.h>

#include "builders.h"
#include "checkpoint/pickle_vm.h"
#include "checkpoint/policy.h"

using namespace torchlint::ckpt;
using namespace torchlint::ckpt::testing;

namespace {
PickleRun run(const std::string& bytes) { return run_pickle(bytes); }
}  // namespace

TEST_CASE("protocol 2 containers, memo and constants build the value graph") {
  std::string p = Pickle()
                      .proto(2)
                      .empty_dict()
                      .put(0)
                      .mark()
                      .unicode("a")
                      .int1(7)
                      .unicode("b")
                      .empty_list()
                      .put(1)
                      .mark()
                      .int4(-5)
                      .none()
                      .newfalse()
                      .appends()
                      .unicode("c")
                      .get(1)
                      .setitems()
                      .stop();
  PickleRun r = run(p);
  REQUIRE(r.complete());
  ValueRef root = r.root_ref();
  REQUIRE(root.is_mapping());
  CHECK(root.get("a").as_int() == 7);
  ValueRef list = root.get("b");
  REQUIRE(list.kind() == ValueKind::kList);
  CHECK(list.size() == 3);
  CHECK(list[0].as_int() == -5);
  CHECK(list[1].is_none());
  CHECK(list[2].as_bool() == false);
  CHECK(root.get("c").id() == list.id());  // the memo holds references, not copies
  CHECK(r.protocol == 2);
  CHECK(r.outside_torch.empty());
}

TEST_CASE("protocol 0 text opcodes") {
  std::string p = "(dp0\nS'key'\np1\nI42\nsVname\np2\nL123456789012345678901234567890L\nsI01\nF1.5\ns.";
  PickleRun r = run(p);
  REQUIRE_MESSAGE(r.complete(), r.error);
  ValueRef root = r.root_ref();
  CHECK(root.get("key").as_int() == 42);
  CHECK(root.get("name").is_big_int());
  CHECK(root.get(1).as_float() == 1.5);  // key True == 1
  CHECK(!r.outside_torch.empty());
}

TEST_CASE("LONG1 magic number and big ints keep their bytes") {
  std::string magic("\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 10);
  std::string p = Pickle().proto(2).byte(0x8a).byte(10).raw(magic).stop();
  PickleRun r = run(p);
  REQUIRE(r.complete());
  CHECK(r.root_ref().big_int_bytes() == std::optional<std::string_view>(magic));
  // The same value as a decimal literal (LONG) compares equal.
  PickleRun t = run("L119547037146038801333356L\n.");
  REQUIRE(t.complete());
  CHECK(t.root_ref().big_int_bytes() == std::optional<std::string_view>(magic));
}

TEST_CASE("globals and calls are recorded, never resolved") {
  PickleRun r = run(os_system_pickle(2));
  REQUIRE(r.complete());
  REQUIRE(r.globals.size() == 1);
  CHECK(r.graph->global_name(r.globals[0].global).qualified() == "posix.system");
  REQUIRE(r.root_ref().is_call());
  CHECK(r.root_ref().callee()->qualified() == "posix.system");
  CHECK(r.root_ref().call_args()[0].as_str() == "echo pwned");
}

TEST_CASE("protocol 4: frames, MEMOIZE, STACK_GLOBAL") {
  PickleRun r = run(os_system_pickle(4));
  REQUIRE(r.complete());
  CHECK(r.root_ref().callee()->qualified() == "posix.system");
  // A FRAME longer than the data is truncation, as in CPython.
  PickleRun f = run(Pickle().proto(4).frame(1000).none().stop());
  CHECK(f.status == PickleStatus::kTruncated);
  // An opcode straddling a frame's end: the C unpickler accepts it, the Python one does not.
  PickleRun s = run(Pickle().proto(4).frame(2).short_unicode("abc").stop());
  CHECK(s.complete());
  CHECK(s.frame_straddled);
}

TEST_CASE("malformed input stops where CPython would raise") {
  CHECK(run(Pickle().proto(2).pop().stop()).status == PickleStatus::kMalformed);       // underflow
  CHECK(run(Pickle().proto(2).get(3).stop()).status == PickleStatus::kMalformed);      // missing memo key
  CHECK(run(Pickle().proto(2).mark().stop()).status == PickleStatus::kMalformed);      // STOP below the mark
  CHECK(run(Pickle().proto(2).tuple().stop()).status == PickleStatus::kMalformed);     // TUPLE without MARK
  CHECK(run(Pickle().proto(2).byte(0xff).stop()).status == PickleStatus::kMalformed);  // no such opcode
  CHECK(run(Pickle().proto(7).none().stop()).status == PickleStatus::kMalformed);      // unknown protocol
  CHECK(run(Pickle().proto(2).int1(42).unicode("os").stack_global().stop()).status == PickleStatus::kMalformed);
  CHECK(run(Pickle().proto(2).unicode("x").tuple1().empty_tuple().reduce().stop()).status == PickleStatus::kMalformed);
  CHECK(run(Pickle().proto(2).empty_list().unicode("k").int1(1).setitem().stop()).status == PickleStatus::kMalformed);
  CHECK(run(std::string("\x80\x02X\xff\xff\xff\x7f", 8)).status == PickleStatus::kTruncated);            // huge length
  CHECK(run(std::string("\x80\x02X\x02\x00\x00\x00\xc3\x28.", 11)).status == PickleStatus::kMalformed);  // bad UTF-8
  CHECK(run("").status == PickleStatus::kTruncated);
}

TEST_CASE("the mark fence: items below the latest MARK cannot be popped (C unpickler)") {
  // ] ( a : APPEND would take the list from below the mark.
  CHECK(run(Pickle().proto(2).empty_list().mark().append().stop()).status == PickleStatus::kMalformed);
  // POP on a mark removes the mark.
  PickleRun r = run(Pickle().proto(2).none().mark().pop().stop());
  CHECK(r.complete());
  CHECK(r.root_ref().is_none());
}

TEST_CASE("limits scale with the pickle: a 30-byte pickle cannot ask for a 4e9-entry memo") {
  PickleRun r = run(Pickle().proto(2).none().long_put(4000000000u).stop());
  CHECK(r.status == PickleStatus::kLimit);
  // A benign dense memo of many entries is fine.
  Pickle p;
  p.proto(2).empty_list();
  for (uint32_t i = 0; i < 20000; ++i) p.none().long_put(i).append();
  CHECK(run(p.stop()).complete());
}

TEST_CASE("cyclic and deep structures cost linear time and no recursion") {
  // A list that contains itself.
  PickleRun c = run(Pickle().proto(2).empty_list().put(0).get(0).append().stop());
  REQUIRE(c.complete());
  CHECK(c.root_ref()[0].id() == c.root_ref().id());
  // 200 000 nested lists.
  Pickle deep;
  deep.proto(2);
  for (int i = 0; i < 200000; ++i) deep.empty_list();
  for (int i = 0; i < 199999; ++i) deep.append();
  CHECK(run(deep.stop()).complete());
  // 100 000 marks never closed: an error, not a crash.
  std::string marks = "\x80\x02" + std::string(100000, '(') + ".";
  CHECK(run(marks).status == PickleStatus::kMalformed);
}

TEST_CASE("looks_like_pickle") {
  CHECK(looks_like_pickle(os_system_pickle(2)));
  CHECK(looks_like_pickle("(lp0\n."));
  CHECK_FALSE(looks_like_pickle("\x89PNG\r\n\x1a\n"));
  CHECK_FALSE(looks_like_pickle("hello world"));
}

TEST_CASE("every call is assessed, including calls whose result is discarded") {
  // OBJ + POP (GHSA-mxhj): the call's result never reaches the returned object.
  std::string p = Pickle().proto(2).mark().global("os", "system").unicode("id").obj().pop().empty_dict().stop();
  PickleRun r = run(p);
  REQUIRE(r.complete());
  PickleSafety s = assess(r, Policy{}, PickleDialect::kTorchLoad);
  REQUIRE(s.globals.size() == 1);
  CHECK(s.globals[0].verdict == Verdict::kDangerous);
  CHECK(s.globals[0].calls == 1);
}
