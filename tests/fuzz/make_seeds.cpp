// Writes the seed corpus of the fuzz targets (one well-formed input per container).
#include <filesystem>
#include <fstream>

#include "seeds.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::filesystem::create_directories(argv[1]);
  for (const auto& [name, bytes] : torchlint::ckpt::testing::seed_inputs()) {
    std::ofstream(std::filesystem::path(argv[1]) / name, std::ios::binary) << bytes;
  }
  return 0;
}
