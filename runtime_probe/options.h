#pragma once
// Parsers for the values of torchlint-probe's options. Each returns nullopt and sets `error`
// to a one-line reason on bad input.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probe.h"

namespace torchlint::probe {

// NAME:SHAPE[:DTYPE[:LOW..HIGH]], e.g. `x:1x3x224x224:float32`, `tokens:8x128:int64:0..32000`
// (HIGH excluded). DTYPE defaults to float32.
std::optional<InputSpec> parse_input_spec(std::string_view text, std::string& error);
// 16GiB, 512MiB, 1.5G (binary units: K, M, G, T, KiB, ... GiB), 2GB (decimal: KB, MB, GB, TB), 1000000.
std::optional<uint64_t> parse_byte_size(std::string_view text, std::string& error);
// 1,8,32 (positive, kept in the given order, duplicates dropped).
std::optional<std::vector<int64_t>> parse_batch_sizes(std::string_view text, std::string& error);
// amp,memory,... : names from kCheckNames, or `all`.
std::optional<std::vector<std::string>> parse_check_list(std::string_view text, std::string& error);
// sgd, sgd-momentum, adam, adamw, adam-amsgrad
std::optional<OptimizerKind> parse_optimizer(std::string_view text, std::string& error);

}  // namespace torchlint::probe
