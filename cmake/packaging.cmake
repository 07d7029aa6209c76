# Installing and packaging: `cmake --install` puts the binaries, their man pages (generated
# from the binaries' own --help and rule catalog) and a bash completion under the prefix;
# `cpack -G DEB` builds one Debian package per component (torchlint; torchlint-cpp and
# torchlint-probe when they are built, since they pull in Clang and LibTorch), with the
# shared-library dependencies computed by dpkg-shlibdeps.
include(GNUInstallDirs)
find_package(Python3 COMPONENTS Interpreter REQUIRED)

set(_torchlint_man_pages "")
function(torchlint_man_page target description component)
  set(page ${CMAKE_BINARY_DIR}/man/${target}.1)
  add_custom_command(OUTPUT ${page}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/scripts/packaging/gen_manpage.py $<TARGET_FILE:${target}> ${page}
            "${description}"
    DEPENDS ${target} ${CMAKE_SOURCE_DIR}/scripts/packaging/gen_manpage.py
    COMMENT "Man page ${target}.1" VERBATIM)
  add_custom_target(${target}-man ALL DEPENDS ${page})
  install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT ${component})
endfunction()

install(TARGETS torchlint RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT torchlint)
torchlint_man_page(torchlint "lint PyTorch training code and checkpoints against the best-practice checklist" torchlint)
set(_completion ${CMAKE_BINARY_DIR}/completions/torchlint)
add_custom_command(OUTPUT ${_completion}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/completions
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/scripts/packaging/gen_completion.py $<TARGET_FILE:torchlint> ${_completion}
  DEPENDS torchlint ${CMAKE_SOURCE_DIR}/scripts/packaging/gen_completion.py
  COMMENT "bash completion" VERBATIM)
add_custom_target(torchlint-completion ALL DEPENDS ${_completion})
install(FILES ${_completion} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT torchlint)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/.pre-commit-hooks.yaml
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT torchlint)
set(_components torchlint)

if(TARGET torchlint-cpp)
  install(TARGETS torchlint-cpp RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cpp)
  torchlint_man_page(torchlint-cpp "lint LibTorch C++ training code (Clang LibTooling)" cpp)
  list(APPEND _components cpp)
endif()
if(TARGET torchlint-probe)
  install(TARGETS torchlint-probe RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT probe)
  torchlint_man_page(torchlint-probe "load a TorchScript model and check AMP, memory, cuDNN and export readiness" probe)
  list(APPEND _components probe)
endif()

set(CPACK_PACKAGE_NAME torchlint)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "torchlint maintainers <torchlint@example.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Linter for PyTorch training code and checkpoints")
set(CPACK_GENERATOR DEB)
set(CPACK_COMPONENTS_ALL ${_components})
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_TORCHLINT_PACKAGE_NAME torchlint)
set(CPACK_DEBIAN_TORCHLINT_DESCRIPTION "Linter for PyTorch training code and checkpoints
 torchlint checks PyTorch training code against a best-practice checklist (seeds, no_grad in
 evaluation, DDP, checkpoints, DataLoader settings, AMP, unsafe torch.load, ...) and inspects
 checkpoint files without executing them. Output: text, JSON, SARIF, GitHub and GitLab
 annotations; pre-commit hooks and repository audits.")
set(CPACK_DEBIAN_CPP_PACKAGE_NAME torchlint-cpp)
set(CPACK_DEBIAN_CPP_DESCRIPTION "torchlint's C++ front-end for LibTorch code
 Runs torchlint's rules on LibTorch C++ sources with Clang's LibTooling; torchlint check
 calls it for .cpp files when it is installed.")
# Clang's resource headers (stddef.h, ...) are read at run time, not linked.
set(CPACK_DEBIAN_CPP_PACKAGE_DEPENDS "torchlint (= ${PROJECT_VERSION}), libclang-common-14-dev")
set(CPACK_DEBIAN_PROBE_PACKAGE_NAME torchlint-probe)
set(CPACK_DEBIAN_PROBE_DESCRIPTION "torchlint's runtime probe for TorchScript models
 Loads a model with LibTorch on the GPU, or the CPU when there is none, and checks mixed
 precision, memory, cuDNN benchmark mode and export readiness.")
set(CPACK_DEBIAN_PROBE_PACKAGE_DEPENDS "torchlint (= ${PROJECT_VERSION})")
include(CPack)
