// libFuzzer target: the zip reader, and reading (inflating) every member.
#include <cstddef>
#include <cstdint>
#include <string>

#include "checkpoint/zip_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<torchlint::ckpt::Issue> issues;
  auto zip = torchlint::ckpt::ZipArchive::read(bytes, issues);
  if (!zip) return 0;
  for (const auto& e : zip->entries()) {
    std::string buffer, error;
    (void)zip->read(e, buffer, 1u << 24, error);
    (void)zip->find(e.name);
  }
  return 0;
}
