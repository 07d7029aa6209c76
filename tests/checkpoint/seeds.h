#pragma once
// Well-formed inputs of every container, for the mutation test and the fuzz targets.
#include <string>
#include <utility>
#include <vector>

#include "builders.h"

namespace torchlint::ckpt::testing {

inline std::vector<std::pair<std::string, std::string>> seed_inputs() {
  std::vector<std::pair<std::string, std::string>> seeds;
  seeds.emplace_back("zip.pt", benign_zip());
  auto deflated = torch_members(benign_pickle(), benign_storages());
  deflated[0].method = 8;
  deflated.push_back({"archive/constants.pkl", Pickle().proto(2).empty_tuple().stop(), 8});
  seeds.emplace_back("torchscript.pt", build_zip(deflated));
  ZipLayout classic;
  classic.zip64 = false;
  seeds.emplace_back("zip32.pt", build_zip(torch_members(benign_pickle(), benign_storages()), classic));
  std::string magic =
      Pickle().proto(2).byte(0x8a).byte(10).raw(std::string("\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 10)).stop();
  std::string legacy = magic + Pickle().proto(2).raw("M\xe9\x03").stop().bytes() +
                       Pickle().proto(2).empty_dict().stop().bytes() +
                       Pickle()
                           .proto(2)
                           .global("torch._utils", "_rebuild_tensor_v2")
                           .mark()
                           .mark()
                           .unicode("storage")
                           .global("torch", "FloatStorage")
                           .unicode("1")
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
                           .stop()
                           .bytes() +
                       Pickle().proto(2).empty_list().unicode("1").append().stop().bytes();
  put64(legacy, 2);
  legacy += std::string(8, '\x01');
  seeds.emplace_back("legacy.pt", legacy);
  seeds.emplace_back("proto4.pkl", os_system_pickle(4));
  seeds.emplace_back("proto0.pkl", "(dp0\nS'a'\np1\n(lp2\nI1\naF2.5\naL3L\nasVb\np3\ncos\nsystem\np4\ns.");
  std::string header = R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"__metadata__":{"format":"pt"}})";
  seeds.emplace_back("weights.safetensors", safetensors_file(header, std::string(16, '\x3f')));
  std::string npy("\x93NUMPY\x01\x00", 8);
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  put16(npy, static_cast<uint16_t>(h.size()));
  seeds.emplace_back("a.npy", npy + h + std::string(8, '\0'));
  return seeds;
}

}  // namespace torchlint::ckpt::testing
