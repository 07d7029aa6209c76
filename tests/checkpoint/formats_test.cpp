// Container detection and the non-zip readers: safetensors, .npy, legacy stacked pickles.
#include <doctest/doctest.h>

#include <limits>

#include "builders.h"
#include "checkpoint/container.h"
#include "checkpoint/readers.h"
#include "support.h"

using namespace torchlint::ckpt;
using namespace torchlint::ckpt::testing;

TEST_CASE("the format comes from the bytes, the extension is only reported") {
  CHECK(sniff_format(benign_zip()) == Format::kTorchZip);
  CHECK(sniff_format(os_system_pickle(2)) == Format::kRawPickle);
  CHECK(sniff_format("PYTORCH1xxxxxxxx") == Format::kPreviewZip);
  CHECK(sniff_format(std::string("\x93NUMPY\x01\x00", 8) + "xx") == Format::kNpy);
  CHECK(sniff_format(std::string("7z\xbc\xaf\x27\x1c", 6) + "....") == Format::kSevenZip);
  CHECK(sniff_format("") == Format::kEmpty);
  CHECK(sniff_format("\x89PNG\r\n\x1a\n....") == Format::kUnknown);
  Inspected png = inspect("\x89PNG\r\n\x1a\n....", "model.bin");
  CHECK(png.has("TL813"));
  CHECK(png.file->fatal());
  CHECK(checkpoint_extension("dir/model.pth.tar") == ".pth.tar");
  CHECK(checkpoint_extension("weights.safetensors") == ".safetensors");
  CHECK(checkpoint_extension("README") == "");
  // A zip that does not start with PK\3\4 is not a zip for torch (polyglot).
  std::string polyglot = os_system_pickle(2) + benign_zip();
  CHECK(sniff_format(polyglot) == Format::kRawPickle);
  CHECK(inspect(polyglot, "model.pt").has("TL810"));
}

TEST_CASE("safetensors: valid files, and every rule of the reference reader") {
  std::string data(24, '\0');
  std::string ok =
      R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[2],"data_offsets":[16,24]},"__metadata__":{"format":"pt"}})";
  Inspected r = inspect(safetensors_file(ok, data), "m.safetensors");
  CHECK_MESSAGE(r.codes.empty(), r.text());
  CHECK(r.file->format == Format::kSafetensors);
  REQUIRE(r.file->tensors.size() == 2);
  CHECK(r.file->tensors[0].numel == 4);
  CHECK(assess_file_safety(*r.file).level == SafetyLevel::kNoCode);

  auto bad = [&](const std::string& header, const std::string& bytes, const char* code) {
    CAPTURE(header);
    Inspected b = inspect(safetensors_file(header, bytes), "m.safetensors");
    CHECK_MESSAGE(b.has(code), b.text());
  };
  bad(R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"a":{"dtype":"F32","shape":[1],"data_offsets":[16,20]}})",
      std::string(20, '\0'), "TL812");
  bad(R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})", std::string(12, '\0'), "TL813");  // size mismatch
  bad(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", std::string(8, '\0'), "TL813");      // gap at 0
  bad(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", std::string(9, '\0'), "TL813");  // trailing bytes
  bad(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
      std::string(4, '\0'), "TL813");                                                              // overlap
  bad(R"({"a":{"dtype":"X9","shape":[1],"data_offsets":[0,4]}})", std::string(4, '\0'), "TL813");  // unknown dtype
  bad(R"({"__metadata__":{"k":1}})", "", "TL813");  // non-string metadata
  bad(R"({"a":{"dtype":"F32","shape":[18446744073709551615,2],"data_offsets":[0,4]}})", std::string(4, '\0'), "TL813");
  bad(std::string(100, '['), "", "TL813");  // not an object
  // Header length past the end of the file.
  std::string truncated = safetensors_file(ok, data).substr(0, 40);
  CHECK(inspect(truncated, "m.safetensors").has("TL813"));
}

TEST_CASE("npy: numeric arrays, object arrays carry a pickle") {
  auto npy = [](const std::string& header, const std::string& data) {
    std::string h = header;
    while ((10 + h.size() + 1) % 64) h += ' ';
    h += '\n';
    std::string out("\x93NUMPY\x01\x00", 8);
    put16(out, static_cast<uint16_t>(h.size()));
    return out + h + data;
  };
  std::vector<float> v = {1, 2, std::numeric_limits<float>::infinity()};
  std::string values(reinterpret_cast<const char*>(v.data()), 12);
  Inspected r = inspect(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", values), "a.npy", true);
  CHECK_MESSAGE(!r.has("TL813"), r.text());
  REQUIRE(r.file->tensors.size() == 1);
  CHECK(r.file->stats[0].inf == 1);
  CHECK(r.has("TL820"));
  Inspected o = inspect(npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", os_system_pickle(2)), "a.npy");
  CHECK(o.has("TL810"));
  CHECK(inspect(npy("{'descr': '<f4', 'shape': (100,), 'fortran_order': False}", values), "a.npy").has("TL813"));
  CHECK(inspect(npy("__import__('os').system('id')", ""), "a.npy").has("TL813"));
  std::string error;
  auto h = parse_npy_header("{'descr': [('a', '<f4'), ('b', 'O')], 'fortran_order': True, 'shape': (2, 3)}", error);
  REQUIRE(h);
  CHECK(h->object);
  CHECK(h->shape == std::vector<int64_t>{2, 3});
}

TEST_CASE("legacy stacked pickles: magic, header pickles, storage section") {
  std::string magic =
      Pickle().proto(2).byte(0x8a).byte(10).raw(std::string("\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 10)).stop();
  std::string version = Pickle().proto(2).raw("M\xe9\x03").stop();
  std::string sys_info = Pickle().proto(2).empty_dict().unicode("little_endian").byte(0x88).setitem().stop();
  // Legacy persistent ids have a sixth field (view metadata).
  std::string object = Pickle()
                           .proto(2)
                           .global("torch._utils", "_rebuild_tensor_v2")
                           .mark()
                           .mark()
                           .unicode("storage")
                           .global("torch", "FloatStorage")
                           .unicode("140")
                           .unicode("cpu")
                           .int1(2)
                           .none()
                           .tuple()
                           .binpersid()
                           .int1(0)
                           .mark()
                           .int1(2)
                           .tuple()
                           .mark()
                           .int1(1)
                           .tuple()
                           .newfalse()
                           .none()
                           .tuple()
                           .reduce()
                           .stop();
  std::string keys = Pickle().proto(2).empty_list().unicode("140").append().stop();
  std::string section;
  put64(section, 2);
  section += std::string(8, '\0');
  Inspected r = inspect(magic + version + sys_info + object + keys + section, "old.pt");
  CHECK_MESSAGE(r.codes.empty(), r.text());
  CHECK(r.file->format == Format::kLegacyPickle);
  REQUIRE(r.file->tensors.size() == 1);
  CHECK(r.file->tensors[0].shape == std::vector<int64_t>{2});
  CHECK(r.file->pickles.size() == 5);
  // A storage section that is too short, or has extra bytes.
  CHECK(inspect(magic + version + sys_info + object + keys + section.substr(0, 12), "old.pt").has("TL813"));
  CHECK(inspect(magic + version + sys_info + object + keys + section + "junk", "old.pt").has("TL812"));
  // A header pickle that calls something (how the magic-number bypass hides a payload).
  std::string evil_version = Pickle().proto(2).global("os", "getpid").empty_tuple().reduce().stop();
  Inspected e = inspect(magic + evil_version + sys_info + object + keys + section, "old.pt");
  CHECK(e.has("TL810"));
  CHECK(e.has("TL813"));
}

TEST_CASE("cyclic objects do not trap naming, training analysis, summary or diff") {
  // {"a": [<itself>], "w": tensor}
  std::string p = benign_pickle();
  p.pop_back();
  p += Pickle().unicode("loop").empty_list().put(200).get(200).append().setitem().stop().bytes();
  Inspected r = inspect(build_zip(torch_members(p, benign_storages())));
  TrainingState t = analyze_training_state(r.checkpoint);
  std::string summary = render_summary(r.checkpoint, t, {});
  CHECK(summary.find("safety") != std::string::npos);
}
