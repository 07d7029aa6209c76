# Project-wide warning flags, applied per target so third-party grammar code stays quiet.
function(torchlint_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                         -Wnon-virtual-dtor -Wimplicit-fallthrough
                         # Designated initializers leave the remaining members defaulted on purpose.
                         -Wno-missing-field-initializers
                         # GCC 12 reports std::string concatenation falsely (GCC bug 105329).
                         -Wno-restrict)
endfunction()
