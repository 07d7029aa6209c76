#pragma once
// Deciding what a file is from its bytes, in the order torch.load decides
// (checkpoint-formats.md §2): zip by its first four bytes only, then tar, then the
// legacy magic-number pickle sequence; safetensors, .npy and 7z are recognised besides.
// The extension never decides; it is only reported.
#include <string>
#include <string_view>

#include "bytes.h"
#include "checkpoint.h"

namespace torchlint::ckpt {

Format sniff_format(Bytes bytes);

// ".pth.tar" for "model.pth.tar", ".pt" for "x.pt", "" when there is none.
std::string checkpoint_extension(std::string_view filename);

// A valid tar header at offset 0 (what Python's tarfile accepts as a first member).
bool is_tar_header(Bytes bytes);

}  // namespace torchlint::ckpt
