#include "container.h"

#include <algorithm>
#include <cctype>

namespace torchlint::ckpt {

std::string_view format_name(Format f) {
  switch (f) {
    case Format::kUnknown:
      return "unknown format";
    case Format::kEmpty:
      return "empty file";
    case Format::kTorchZip:
      return "torch.save zip archive";
    case Format::kTorchScript:
      return "TorchScript archive (torch.jit.save)";
    case Format::kTorchMobile:
      return "TorchScript lite-interpreter archive";
    case Format::kMobileFlatbuffer:
      return "TorchScript mobile flatbuffer";
    case Format::kPreviewZip:
      return "PYTORCH1 preview archive";
    case Format::kLegacyPickle:
      return "legacy torch.save (stacked pickles, torch < 1.6 format)";
    case Format::kLegacyTar:
      return "legacy torch.save tar archive (torch <= 0.1)";
    case Format::kRawPickle:
      return "plain pickle";
    case Format::kSafetensors:
      return "safetensors";
    case Format::kNpy:
      return "NumPy .npy";
    case Format::kNpz:
      return "NumPy .npz (zip of .npy)";
    case Format::kZip:
      return "zip archive (not a torch checkpoint)";
    case Format::kSevenZip:
      return "7z archive";
  }
  return "unknown format";
}

bool is_tar_header(Bytes b) {
  if (b.size() < 512) return false;
  // The checksum field: octal digits, then NUL or space.
  Bytes field = b.substr(148, 8);
  uint64_t stored = 0;
  size_t i = 0;
  while (i < field.size() && field[i] == ' ') ++i;
  size_t digits = 0;
  for (; i < field.size() && field[i] >= '0' && field[i] <= '7'; ++i, ++digits)
    stored = stored * 8 + static_cast<uint64_t>(field[i] - '0');
  if (digits == 0) return false;
  for (; i < field.size(); ++i) {
    if (field[i] != ' ' && field[i] != '\0') return false;
  }
  uint64_t unsigned_sum = 0;
  int64_t signed_sum = 0;
  for (size_t k = 0; k < 512; ++k) {
    char c = (k >= 148 && k < 156) ? ' ' : b[k];
    unsigned_sum += static_cast<unsigned char>(c);
    signed_sum += static_cast<signed char>(c);
  }
  return stored == unsigned_sum || static_cast<int64_t>(stored) == signed_sum;
}

Format sniff_format(Bytes b) {
  if (b.empty()) return Format::kEmpty;
  if (b.size() >= 8 && b.substr(0, 8) == "PYTORCH1") return Format::kPreviewZip;
  if (b.size() >= 4 && b.substr(0, 4) == Bytes("PK\x03\x04", 4)) return Format::kTorchZip;  // refined by the zip reader
  if (b.size() >= 8 && b.substr(4, 4) == "PTMF") return Format::kMobileFlatbuffer;
  if (is_tar_header(b)) return Format::kLegacyTar;
  if (b.size() >= 6 && b.substr(0, 6) == Bytes("\x93NUMPY", 6)) return Format::kNpy;
  if (b.size() >= 6 && b.substr(0, 6) == Bytes("7z\xBC\xAF\x27\x1C", 6)) return Format::kSevenZip;
  if (b.size() >= 10) {
    uint64_t n = le64(b.data());
    if (n >= 2 && n <= 100'000'000 && n <= b.size() - 8 && b[8] == '{') return Format::kSafetensors;
  }
  if (looks_like_pickle(b)) {
    return Format::kRawPickle;  // refined to kLegacyPickle by the magic number
  }
  return Format::kUnknown;
}

std::string checkpoint_extension(std::string_view filename) {
  size_t slash = filename.find_last_of('/');
  if (slash != std::string_view::npos) filename.remove_prefix(slash + 1);
  size_t dot = filename.find_last_of('.');
  if (dot == std::string_view::npos || dot == 0) return "";
  std::string ext(filename.substr(dot));
  if (ext == ".tar" || ext == ".gz") {
    size_t prev = filename.find_last_of('.', dot - 1);
    if (prev != std::string_view::npos && prev > 0) {
      std::string_view inner = filename.substr(prev, dot - prev);
      if (inner == ".pth" || inner == ".pt" || inner == ".ckpt") ext = std::string(inner) + ext;
    }
  }
  return ext;
}

}  // namespace torchlint::ckpt
