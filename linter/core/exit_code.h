#pragma once

namespace torchlint {

// Exit statuses shared by every torchlint executable, as linters conventionally use them.
inline constexpr int kExitClean = 0;     // nothing found
inline constexpr int kExitFindings = 1;  // findings (or a diff to apply)
inline constexpr int kExitError = 2;     // usage, I/O or internal error

}  // namespace torchlint
