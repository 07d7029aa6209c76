# Project-wide warning flags, applied per target so third-party grammar code stays quiet.
function(torchlint_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                         -Wnon-virtual-dtor -Wimplicit-fallthrough)
endfunction()
