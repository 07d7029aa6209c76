// Hostile checkpoints, built byte by byte: one per bypass class of the reference's table
// (checkpoint-formats.md §14) and per container rule (§4.4), plus the peer corpora's
// classic payloads. Each must be flagged with the right code; none may crash or hang.
#include <doctest/doctest.h>

#include <limits>

#include "builders.h"
#include "support.h"

using namespace torchlint::ckpt;
using namespace torchlint::ckpt::testing;

namespace {

// A torch zip whose data.pkl is `pickle`.
std::string zip_with_pickle(const std::string& pickle) { return build_zip(torch_members(pickle, {})); }

// The benign state_dict with `payload` (opcodes leaving one value) stored under key "x".
std::string state_dict_plus(const std::string& payload_ops) {
  std::string sd = benign_pickle();
  sd.pop_back();  // STOP
  return sd + Pickle().unicode("x").raw(payload_ops).setitem().stop().bytes();
}

}  // namespace

TEST_CASE("benign torch checkpoints produce no finding") {
  Inspected r = inspect(benign_zip());
  CHECK_MESSAGE(r.codes.empty(), r.text());
  CHECK(r.file->tensors.size() == 2);
  CHECK(r.file->tensors[0].name == "fc.weight");
  CHECK(assess_file_safety(*r.file).level == SafetyLevel::kSafe);
}

TEST_CASE("peer corpus payloads at protocols 0, 2 and 4") {
  for (int protocol : {0, 2, 4}) {
    CAPTURE(protocol);
    std::string p = os_system_pickle(protocol);
    if (protocol == 0) p = "cposix\nsystem\n(Vecho pwned\ntR.";
    Inspected raw = inspect(p, "payload.pkl");
    CHECK_MESSAGE(raw.has("TL810"), raw.text());
    CHECK(assess_file_safety(*raw.file).level == SafetyLevel::kDangerous);
    Inspected zipped = inspect(zip_with_pickle(p));
    CHECK(zipped.has("TL810"));
  }
  // INST (malicious10), and eval/exec/compile.
  CHECK(inspect("(S'print(1)'\ni__builtin__\nexec\n.", "x.pkl").has("TL810"));
  CHECK(inspect(Pickle().proto(2).global("__builtin__", "eval").unicode("1").tuple1().reduce().stop(), "x.pkl")
            .has("TL810"));
}

TEST_CASE("B1/B6/B17: dangerous callables, submodules, nested loaders") {
  for (auto [m, n] : std::initializer_list<std::pair<const char*, const char*>>{
           {"asyncio.unix_events", "_UnixSubprocessTransport._start"},
           {"torch.storage", "_load_from_bytes"},
           {"_pickle", "loads"},
           {"pip", "main"},
           {"timeit", "timeit"},
           {"pydoc", "pipepager"},
           {"torch.utils.collect_env", "run"},
           {"uuid", "_get_command_stdout"},
           {"functools", "partial"}}) {
    CAPTURE(m);
    Inspected r = inspect(zip_with_pickle(Pickle().proto(2).global(m, n).unicode("x").tuple1().reduce().stop()));
    CHECK_MESSAGE(r.has("TL810"), r.text());
  }
}

TEST_CASE("B7: STACK_GLOBAL operands from STRING and from the very first opcodes") {
  std::string p = Pickle().string0("os").string0("system").stack_global().unicode("id").tuple1().reduce().stop();
  CHECK(inspect(p, "x.pkl").has("TL810"));
  std::string q = Pickle().short_unicode("os").short_unicode("system").stack_global().stop();
  CHECK(inspect(q, "x.pkl").has("TL810"));
}

TEST_CASE("B8: memo decoys resolve to what is really on the stack") {
  // A decoy `torch LongStorage` is stored, then overwritten with the real names.
  std::string p = Pickle()
                      .proto(4)
                      .short_unicode("torch")
                      .put(0)
                      .short_unicode("LongStorage")
                      .put(1)
                      .pop()
                      .pop()
                      .short_unicode("os")
                      .put(0)
                      .short_unicode("system")
                      .put(1)
                      .pop()
                      .pop()
                      .get(0)
                      .get(1)
                      .stack_global()
                      .unicode("id")
                      .tuple1()
                      .reduce()
                      .stop();
  Inspected r = inspect(p, "x.pkl");
  CHECK_MESSAGE(r.has("TL810"), r.text());
  // A missing memo key after the payload: malformed, and the payload is still reported.
  std::string k = Pickle().proto(2).global("os", "system").unicode("id").tuple1().reduce().get(99).stop();
  Inspected rk = inspect(k, "x.pkl");
  CHECK(rk.has("TL810"));
  CHECK(rk.has("TL813"));
  // Type confusion: an int as module name. CPython refuses it before importing.
  std::string t = Pickle().proto(4).int1(42).put(0).short_unicode("os").get(0).stack_global().stop();
  Inspected rt = inspect(t, "x.pkl");
  CHECK(rt.has("TL813"));
}

TEST_CASE("B9: BUILD sets an attribute on a module-level object") {
  std::string p =
      Pickle().proto(2).global("numpy", "prod").empty_dict().unicode("a").unicode("os").setitem().build().stop();
  Inspected r = inspect(zip_with_pickle(p));
  CHECK_MESSAGE(r.has("TL810"), r.text());
}

TEST_CASE("B10/B11: dotted names through dangerous modules and dunders") {
  CHECK(inspect(Pickle().proto(4).short_unicode("pathlib").short_unicode("os.system").stack_global().stop(), "x.pkl")
            .has("TL810"));
  CHECK(
      inspect(Pickle().proto(4).short_unicode("numpy").short_unicode("size.__globals__").stack_global().stop(), "x.pkl")
          .has("TL810"));
}

TEST_CASE("B12/B13/B15: import_module+getattr, OBJ+POP, EXT codes") {
  std::string chain = Pickle()
                          .proto(2)
                          .global("builtins", "getattr")
                          .global("importlib", "import_module")
                          .unicode("os")
                          .tuple1()
                          .reduce()
                          .unicode("system")
                          .tuple2()
                          .reduce()
                          .unicode("id")
                          .tuple1()
                          .reduce()
                          .stop();
  Inspected r = inspect(chain, "x.pkl");
  CHECK(r.has("TL810"));
  std::string hidden = state_dict_plus(Pickle().mark().global("os", "system").unicode("id").obj().pop().none());
  Inspected h = inspect(zip_with_pickle(hidden));
  CHECK_MESSAGE(h.has("TL810"), h.text());
  std::string ext = Pickle().proto(2).byte(0x82).byte(1).unicode("id").tuple1().reduce().stop();
  Inspected e = inspect(ext, "x.pkl");
  CHECK_MESSAGE(e.has("TL810"), e.text());
}

TEST_CASE("dangerous whatever the names: computed imports, calls of call results, SETITEM on globals") {
  // STACK_GLOBAL with a module name computed by a call.
  std::string dyn = Pickle()
                        .proto(4)
                        .global("collections", "OrderedDict")
                        .empty_tuple()
                        .reduce()
                        .short_unicode("system")
                        .stack_global()
                        .stop();
  Inspected d = inspect(dyn, "x.pkl");
  CHECK_MESSAGE(d.has("TL810"), d.text());
  // methodcaller("system", "id")(os)-style: calling a call's result.
  std::string call_call =
      Pickle().proto(2).global("collections", "OrderedDict").empty_tuple().reduce().empty_tuple().reduce().stop();
  Inspected c = inspect(call_call, "x.pkl");
  CHECK_MESSAGE(c.has("TL810"), c.text());
  // SETITEM on os.environ.
  std::string env = Pickle()
                        .proto(2)
                        .global("collections", "Counter")
                        .empty_tuple()
                        .reduce()
                        .unicode("LD_PRELOAD")
                        .unicode("/tmp/x.so")
                        .setitem()
                        .stop();
  CHECK(inspect(env, "x.pkl").codes.empty());  // Counter is a dict: fine
  std::string env2 = Pickle().proto(2).global("mylib", "CONFIG").unicode("k").unicode("v").setitem().stop();
  Inspected e2 = inspect(env2, "x.pkl");
  CHECK_MESSAGE(e2.has("TL810"), e2.text());
  // APPEND on an arbitrary object (its `append` method runs).
  std::string app = Pickle().proto(2).global("mylib", "Thing").empty_tuple().reduce().none().append().stop();
  CHECK(inspect(app, "x.pkl").has("TL810"));
}

TEST_CASE("B14: the legacy magic number computed by eval") {
  std::string first =
      Pickle().proto(2).global("__builtin__", "eval").unicode("0x1950a86a20f9469cfc6c").tuple1().reduce().stop();
  std::string rest = Pickle().proto(2).raw("M\xe9\x03").stop().bytes();
  Inspected r = inspect(first + rest, "model.pt");
  CHECK_MESSAGE(r.has("TL810"), r.text());
}

TEST_CASE("B2: a pickle hidden in a zip member that is not called .pkl (CVE-2025-1889)") {
  auto members = torch_members(benign_pickle(), benign_storages());
  members.push_back({"archive/extra/notes.txt", os_system_pickle(2)});
  Inspected r = inspect(build_zip(members));
  CHECK_MESSAGE(r.has("TL810"), r.text());
}

TEST_CASE("B18: a TorchScript archive is not protected by weights_only") {
  auto members = torch_members(benign_pickle(), benign_storages());
  members.push_back({"archive/constants.pkl", Pickle().proto(2).empty_tuple().stop()});
  members.push_back({"archive/code/__torch__/m.py", "def forward(self):\n  pass\n", 8});
  Inspected r = inspect(build_zip(members));
  CHECK(r.file->format == Format::kTorchScript);
  CHECK_MESSAGE(r.has("TL810"), r.text());
  CHECK_FALSE(r.has("TL811"));
}

TEST_CASE("B3/B4/B5: zip parser differentials are reported, the file is still read as torch reads it") {
  SUBCASE("local header name differs from the directory") {
    auto m = torch_members(benign_pickle(), benign_storages());
    m[0].local_name = "archive/datap.kl";
    Inspected r = inspect(build_zip(m));
    CHECK(r.has("TL812"));
    CHECK(r.file->tensors.size() == 2);
  }
  SUBCASE("encryption flag only in the local header") {
    auto m = torch_members(benign_pickle(), benign_storages());
    m[0].local_flags |= 0x1;
    Inspected r = inspect(build_zip(m));
    CHECK(r.has("TL812"));
    CHECK_FALSE(r.has("TL813"));
  }
  SUBCASE("encryption flag in the directory: torch refuses") {
    auto m = torch_members(benign_pickle(), benign_storages());
    m[0].flags |= 0x1;
    Inspected r = inspect(build_zip(m));
    CHECK(r.has("TL813"));
    CHECK(r.file->fatal());
  }
  SUBCASE("CRC mismatch") {
    auto m = torch_members(benign_pickle(), benign_storages());
    m[0].wrong_crc = true;
    CHECK(inspect(build_zip(m)).has("TL812"));
  }
}

TEST_CASE("zip structure rules (§4.4)") {
  auto base = [] { return torch_members(benign_pickle(), benign_storages()); };
  SUBCASE("duplicate names") {
    auto m = base();
    m.push_back(m[0]);
    CHECK(inspect(build_zip(m)).has("TL812"));
  }
  SUBCASE("names differing only in case") {
    auto m = base();
    m.push_back({"archive/DATA.pkl", os_system_pickle(2)});
    Inspected r = inspect(build_zip(m));
    CHECK(r.has("TL812"));
    CHECK(r.has("TL810"));  // the shadowed member is a pickle too, and walked
  }
  SUBCASE("path traversal and entries outside the archive directory") {
    auto m = base();
    m.push_back({"archive/../../etc/cron.d/x", "x"});
    m.push_back({"/abs", "x"});
    CHECK(inspect(build_zip(m)).has("TL812"));
  }
  SUBCASE("an entry the end record does not count") {
    auto m = base();
    m.push_back({"archive/hidden.pkl", os_system_pickle(2)});
    ZipLayout layout;
    layout.hidden_entries = 1;
    Inspected r = inspect(build_zip(m, layout));
    CHECK_MESSAGE(r.has("TL812"), r.text());
  }
  SUBCASE("bytes after the archive") {
    ZipLayout layout;
    layout.trailing = os_system_pickle(2);
    CHECK(inspect(build_zip(base(), layout)).has("TL812"));
  }
  SUBCASE("bytes after STOP in data.pkl") {
    auto m = base();
    m[0].data += os_system_pickle(2);
    Inspected r = inspect(build_zip(m));
    CHECK(r.has("TL812"));
  }
  SUBCASE("no version record") {
    auto m = base();
    m.pop_back();
    CHECK(inspect(build_zip(m)).has("TL813"));
  }
  SUBCASE("no data.pkl") {
    auto m = base();
    m.erase(m.begin());
    CHECK(inspect(build_zip(m)).has("TL813"));
  }
  SUBCASE("an unreferenced storage record") {
    auto m = base();
    m.push_back({"archive/data/7", "xxxx"});
    Inspected r = inspect(build_zip(m));
    CHECK(r.has("TL813"));
    CHECK_FALSE(r.file->fatal());
  }
  SUBCASE("storage record smaller than numel x element size (CVE-2026-24747)") {
    auto s = benign_storages();
    s[0].resize(8);
    Inspected r = inspect(build_zip(torch_members(benign_pickle(), s)));
    CHECK(r.has("TL813"));
    CHECK(r.file->fatal());
  }
  SUBCASE("a tensor that reaches past its storage") {
    std::string p = state_dict_pickle({{"w", {4, 4}, 6}});
    Inspected r = inspect(build_zip(torch_members(p, {std::string(24, '\0')})));
    CHECK(r.has("TL813"));
  }
  SUBCASE("a persistent id that is not a storage") {
    std::string p = Pickle()
                        .proto(2)
                        .global("torch._utils", "_rebuild_tensor_v2")
                        .unicode("nope")
                        .binpersid()
                        .int1(0)
                        .empty_tuple()
                        .empty_tuple()
                        .newfalse()
                        .none()
                        .tuple()
                        .reduce()
                        .stop();
    CHECK(inspect(zip_with_pickle(p)).has("TL813"));
  }
  SUBCASE("a deflated storage that claims a 40 GB size (zip bomb)") {
    auto m = base();
    m[1].method = 8;
    m[1].data = std::string(1 << 20, '\0');
    m[1].declared_size = 0xF0000000u;  // ~4 GB from ~1 KB
    Inspected r = inspect(build_zip(m));
    CHECK(!r.codes.empty());
  }
  SUBCASE("truncated anywhere") {
    std::string z = build_zip(base());
    for (size_t n : {z.size() - 1, z.size() / 2, size_t{30}, size_t{4}}) {
      Inspected r = inspect(z.substr(0, n));
      CHECK(r.has("TL813"));
      CHECK(r.file->fatal());
    }
  }
}

TEST_CASE("storage locations, wrapper prefixes and dtypes from hand-built pickles") {
  std::string p = state_dict_pickle({{"module.fc.weight", {2, 3}, 6, "cuda:0"}, {"module.fc.bias", {2}, 2, "cuda:0"}});
  Inspected r = inspect(build_zip(torch_members(p, benign_storages())));
  CHECK(r.has("TL822"));
  CHECK(r.has("TL823"));
  std::string d = state_dict_pickle({{"fc.weight", {2}, 2, "cpu", "DoubleStorage"}});
  Inspected rd = inspect(build_zip(torch_members(d, {std::string(16, '\0')})));
  CHECK(rd.has("TL821"));
}

TEST_CASE("the value scan finds NaN and Inf") {
  auto s = benign_storages();
  float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(s[0].data() + 4, &nan, 4);
  Inspected r = inspect(build_zip(torch_members(benign_pickle(), s)), "model.pt", true);
  CHECK(r.has("TL820"));
  REQUIRE(r.file->stats.size() == 2);
  CHECK(r.file->stats[0].nan == 1);
  CHECK(r.file->stats[0].min == doctest::Approx(-0.25));
  CHECK(r.file->stats[0].max == doctest::Approx(2.0));
  CHECK(r.file->stats[1].mean == doctest::Approx(0.0));
  CHECK_FALSE(inspect(benign_zip(), "model.pt", true).has("TL820"));
}

TEST_CASE("a user-allowlisted global is not reported") {
  std::string p = state_dict_plus(Pickle().global("argparse", "Namespace").empty_tuple().newobj().empty_dict().build());
  CHECK(inspect(zip_with_pickle(p)).has("TL811"));
  CHECK_FALSE(inspect(zip_with_pickle(p), "model.pt", false, {"argparse.Namespace"}).has("TL811"));
}

TEST_CASE("B16: a call before a deliberate error is still reported (exception-oriented programming)") {
  // os.system runs, then the pickle fails on purpose (a missing memo key, then truncation).
  std::string p = Pickle().proto(2).global("os", "system").unicode("id").tuple1().reduce().pop().get(7).stop();
  Inspected r = inspect(zip_with_pickle(p));
  CHECK_MESSAGE(r.has("TL810"), r.text());
  CHECK(r.has("TL813"));
  std::string t = Pickle().proto(2).global("subprocess", "Popen").unicode("id").tuple1().reduce().bytes();
  Inspected rt = inspect(t, "x.pkl");
  CHECK(rt.has("TL810"));
  CHECK(rt.has("TL813"));
  CHECK(assess_file_safety(*rt.file).level == SafetyLevel::kDangerous);
}

TEST_CASE("B17: pickles carried inside a pickle as bytes constants are walked too") {
  std::string inner = os_system_pickle(2);
  // pickle.loads(b"...") with the payload as BINBYTES (protocol 3+).
  std::string binbytes =
      Pickle().proto(3).global("_pickle", "loads").byte('B').raw(std::string_view("\0\0\0\0", 4)).bytes();
  binbytes.resize(binbytes.size() - 4);
  put32(binbytes, static_cast<uint32_t>(inner.size()));
  binbytes += inner;
  binbytes += Pickle().tuple1().reduce().stop().bytes();
  Inspected r = inspect(binbytes, "x.pkl");
  CHECK_MESSAGE(r.has("TL810"), r.text());
  bool embedded = false;
  for (const auto& p : r.file->pickles)
    embedded |= p->where.find("embedded") != std::string::npos && p->safety.dangerous();
  CHECK_MESSAGE(embedded, r.text());
  // Protocol 2 has no bytes opcode: bytes travel as _codecs.encode(str, 'latin1') (allowlisted),
  // here as a harmless-looking value of a state_dict that nothing in it loads.
  std::string latin1;
  for (unsigned char c : inner) {
    if (c < 0x80) {
      latin1 += static_cast<char>(c);
    } else {
      latin1 += static_cast<char>(0xC0 | (c >> 6));
      latin1 += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  std::string carried =
      state_dict_plus(Pickle().global("_codecs", "encode").unicode(latin1).unicode("latin1").tuple2().reduce());
  Inspected c = inspect(zip_with_pickle(carried));
  CHECK_MESSAGE(c.has("TL810"), c.text());
  bool found = false;
  for (const auto& p : c.file->pickles) found |= !p->loaded_by_torch && p->where.find("embedded") != std::string::npos;
  CHECK(found);
  // Random bytes that only start like a pickle are not reported.
  std::string noise = state_dict_plus(
      Pickle().global("_codecs", "encode").unicode("\xc2\x80\x02\xc3\xbf\xc3\xbf").unicode("latin1").tuple2().reduce());
  Inspected n = inspect(build_zip(torch_members(noise, benign_storages())));
  CHECK_MESSAGE(n.codes.empty(), n.text());
}

TEST_CASE("B2: a protocol-0 pickle (no header to sniff) hidden in a stored zip member") {
  auto members = torch_members(benign_pickle(), benign_storages());
  members.push_back({"archive/extra/readme", "cos\nsystem\n(S'id'\ntR."});
  Inspected r = inspect(build_zip(members));
  CHECK_MESSAGE(r.has("TL810"), r.text());
}

TEST_CASE("legacy tar: every member pickle is walked") {
  auto tar_member = [](const std::string& name, const std::string& data) {
    std::string h(512, '\0');
    std::memcpy(h.data(), name.data(), name.size());
    std::memcpy(h.data() + 100, "0000644", 7);
    std::memcpy(h.data() + 108, "0000000", 7);
    std::memcpy(h.data() + 116, "0000000", 7);
    char size[12];
    std::snprintf(size, sizeof size, "%011o", static_cast<unsigned>(data.size()));
    std::memcpy(h.data() + 124, size, 11);
    std::memcpy(h.data() + 136, "00000000000", 11);
    h[156] = '0';
    std::memcpy(h.data() + 257,
                "ustar\0"
                "00",
                8);
    std::memset(h.data() + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned char c : h) sum += c;
    char chk[8];
    std::snprintf(chk, sizeof chk, "%06o", sum);
    std::memcpy(h.data() + 148, chk, 7);
    h[154] = '\0';
    std::string out = h + data;
    out.resize((out.size() + 511) / 512 * 512, '\0');
    return out;
  };
  std::string zero = Pickle().proto(2).int1(0).stop();
  std::string tar = tar_member("storages", zero) + tar_member("tensors", zero) +
                    tar_member("pickle", os_system_pickle(2)) + std::string(1024, '\0');
  Inspected r = inspect(tar, "old.pt");
  CHECK(r.file->format == Format::kLegacyTar);
  CHECK_MESSAGE(r.has("TL810"), r.text());
  // Truncated inside a member: malformed, no crash.
  Inspected t = inspect(tar.substr(0, 1100), "old.pt");
  CHECK(t.has("TL813"));
}

TEST_CASE("absurd sizes are refused before anything is allocated") {
  auto huge = [](uint8_t opcode, int width) {
    std::string p("\x80\x04", 2);
    p += static_cast<char>(opcode);
    p.append(static_cast<size_t>(width), '\xff');
    if (width == 8) p.back() = '\x7f';
    return p + ".";
  };
  for (auto [opcode, width] : std::initializer_list<std::pair<uint8_t, int>>{
           {0x8d, 8}, {0x8e, 8}, {0x96, 8}, {0x95, 8}, {'X', 4}, {'B', 4}, {0x8b, 4}, {'T', 4}}) {
    CAPTURE(static_cast<int>(opcode));
    Inspected r = inspect(huge(opcode, width), "x.pkl");
    CHECK(r.has("TL813"));
    CHECK(r.file->fatal());
  }
  // A tensor whose shape multiplies past 2^64 elements (and past its 2-element storage).
  std::string p = Pickle()
                      .proto(2)
                      .global("collections", "OrderedDict")
                      .put(0)
                      .empty_tuple()
                      .reduce()
                      .mark()
                      .unicode("w")
                      .global("torch._utils", "_rebuild_tensor_v2")
                      .mark()
                      .mark()
                      .unicode("storage")
                      .global("torch", "FloatStorage")
                      .unicode("0")
                      .unicode("cpu")
                      .int1(2)
                      .tuple()
                      .binpersid()
                      .int1(0)
                      .mark()
                      .int4(0x7fffffff)
                      .int4(0x7fffffff)
                      .int4(0x7fffffff)
                      .tuple()
                      .mark()
                      .int1(1)
                      .int1(1)
                      .int1(1)
                      .tuple()
                      .newfalse()
                      .get(0)
                      .empty_tuple()
                      .reduce()
                      .tuple()
                      .reduce()
                      .setitems()
                      .stop();
  Inspected r = inspect(build_zip(torch_members(p, {std::string(8, '\0')})), "model.pt", true);
  CHECK_MESSAGE(r.has("TL813"), r.text());
  // A zip end record that claims 4 billion entries.
  std::string z32 = build_zip(torch_members(benign_pickle(), benign_storages()), [] {
    ZipLayout l;
    l.zip64 = false;
    return l;
  }());
  size_t eocd = z32.rfind(std::string("PK\x05\x06", 4));
  REQUIRE(eocd != std::string::npos);
  std::memset(z32.data() + eocd + 8, 0xff, 4);
  Inspected rz = inspect(z32);
  CHECK(rz.has("TL813"));
}

TEST_CASE("verdict by allowlist: what is not known to be safe is TL810, never TL811 alone") {
  // Library callables that execute strings, load code or write files, with no name any
  // denylist carries (graph-module reducers, yaml loaders, file writers).
  for (auto [m, n] : std::initializer_list<std::pair<const char*, const char*>>{
           {"torch.fx.graph_module", "reduce_graph_module"},
           {"torch.fx.graph_module", "_deserialize_graph_module"},
           {"yaml", "unsafe_load"},
           {"yaml", "full_load"},
           {"numpy", "save"},
           {"torch", "save"},
           {"gzip", "open"},
           {"bz2", "open"},
           {"lzma", "open"},
           {"mylib.utils", "Helper"}}) {
    CAPTURE(m);
    CAPTURE(n);
    Inspected r = inspect(zip_with_pickle(Pickle().proto(2).global(m, n).unicode("x").tuple1().reduce().stop()));
    CHECK_MESSAGE(r.has("TL810"), r.text());
    CHECK_FALSE(r.has("TL811"));
    CHECK(assess_file_safety(*r.file).level == SafetyLevel::kDangerous);
  }
  // Dotted names that reach a dangerous callable through another module's attributes.
  for (auto [m, n] : std::initializer_list<std::pair<const char*, const char*>>{{"tempfile", "_os.system"},
                                                                                {"torch.serialization", "os.system"},
                                                                                {"torch.hub", "sys.modules.get"},
                                                                                {"shutil", "os.system"},
                                                                                {"mylib", "_subprocess.Popen"}}) {
    CAPTURE(m);
    CAPTURE(n);
    std::string p =
        Pickle().proto(4).short_unicode(m).short_unicode(n).stack_global().unicode("x").tuple1().reduce().stop();
    Inspected r = inspect(zip_with_pickle(p));
    CHECK_MESSAGE(r.has("TL810"), r.text());
    CHECK(r.text().find("resolves to") != std::string::npos);
  }
  // Reviewed reconstructors: needs trust, no code found.
  Inspected ns =
      inspect(zip_with_pickle(Pickle().proto(2).global("argparse", "Namespace").empty_tuple().reduce().stop()));
  CHECK_MESSAGE(ns.codes == std::set<std::string>{"TL811"}, ns.text());
  CHECK(assess_file_safety(*ns.file).level == SafetyLevel::kNeedsTrust);
}

TEST_CASE("stream vs buffer: an opcode that runs past its FRAME is read differently by torch.load") {
  // torch.load reads data.pkl through io.BytesIO: the C unpickler holds the frame as its
  // buffer, and a read the frame cannot finish is taken from after the frame. A buffer
  // reader sees `builtins.open` as the payload of a SHORT_BINBYTES; the stream reader
  // runs it (confirmed with torch 1.13: the marker file is created).
  const std::string k = "\x08";
  std::string frame = std::string("\x8c") + k + "A";  // SHORT_BINUNICODE of 8 bytes, 1 inside the frame
  std::string s = "cbuiltins\nopen\n(V/tmp/marker\nVw\ntR";
  s += (100 - s.size()) % 2 ? std::string(
                                  "K\x00"
                                  "0",
                                  3)
                            : "";
  while (s.size() < 100) s += "N0";
  REQUIRE(s.size() == 100);
  std::string pickle = std::string("\x80\x04\x95", 3);
  for (int i = 0; i < 8; ++i) pickle += static_cast<char>(i == 0 ? frame.size() : 0);
  pickle += frame + std::string(7, 'j') + "C" + s + "\x86.";
  Inspected r = inspect(zip_with_pickle(pickle));
  CHECK_MESSAGE(r.has("TL812"), r.text());
  CHECK(r.has("TL810"));
  CHECK(r.text().find("as a stream") != std::string::npos);
  // The same bytes without the frame crossing: nothing to report about streams.
  std::string aligned = std::string("\x80\x04\x95", 3);
  std::string body = Pickle().short_unicode("ab").bytes();
  for (int i = 0; i < 8; ++i) aligned += static_cast<char>(i == 0 ? body.size() : 0);
  aligned += body + ".";
  Inspected ok = inspect(zip_with_pickle(aligned));
  CHECK_FALSE(ok.has("TL812"));
  CHECK_FALSE(ok.has("TL810"));
}

TEST_CASE("resources: bombs and opcode floods give one clear finding") {
  // data.pkl declares 1 GiB from 1 MB: refused before inflating.
  ZipMember pkl{"archive/data.pkl", std::string("\x80\x02", 2) + std::string(65 << 20, 'N') + "."};
  pkl.method = 8;
  std::vector<ZipMember> members{pkl, {"archive/version", "3\n"}};
  Inspected bomb = inspect(build_zip(members));
  CHECK_MESSAGE(bomb.has("TL813"), bomb.text());
  CHECK(bomb.text().find("bomb") != std::string::npos);
  CHECK(bomb.file->fatal());
  // 10^6 BUILD opcodes: one finding with a count, not 10^6.
  std::string flood("\x80\x02]", 3);
  for (int i = 0; i < 1000000; ++i)
    flood +=
        "K\x01"
        "b";
  flood += ".";
  Inspected r = inspect(flood, "flood.pkl");
  CHECK(r.diagnostics.size() == 1);
  CHECK_MESSAGE(r.text().find("999999 more") != std::string::npos, r.text());
}
