// libFuzzer target: safetensors headers (the input is the JSON header; the length prefix
// and a byte buffer are added so every input reaches the parser).
#include <cstddef>
#include <cstdint>
#include <string>

#include "checkpoint/inspector.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string header(reinterpret_cast<const char*>(data), size);
  std::string file(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) file[i] = static_cast<char>(n >> (8 * i));
  file += header;
  file += std::string(64, '\0');
  auto f = torchlint::ckpt::inspect_bytes(std::move(file), "fuzz.safetensors", {});
  (void)f;
  return 0;
}
