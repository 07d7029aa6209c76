# Script mode: cmake -DOUTPUT=file.cpp -DRULES_DIR=rules -P EmbedDocs.cmake
# Writes a C++ table from rule code to the Markdown doc, so `torchlint rule`, SARIF help
# and the statistics all read the one doc that sits beside the rule. A C++ rule's doc
# (rules/cpp/, its `## C++` section) joins the doc of the rule with the same code, before
# its `## Options` section.
file(GLOB DOCS ${RULES_DIR}/*/*.md)
file(GLOB CPP_DOCS ${RULES_DIR}/cpp/*.md)
list(REMOVE_ITEM DOCS ${CPP_DOCS} "")
list(SORT DOCS)
foreach(doc IN LISTS CPP_DOCS)
  get_filename_component(name ${doc} NAME_WE)
  string(REGEX MATCH "^TL[0-9]+" code "${name}")
  if(code)
    file(READ ${doc} cpp_doc_${code})
  endif()
endforeach()
set(body "")
foreach(doc IN LISTS DOCS)
  get_filename_component(name ${doc} NAME_WE)
  string(REGEX MATCH "^TL[0-9]+" code "${name}")
  if(NOT code)
    continue()
  endif()
  file(READ ${doc} text)
  if(DEFINED cpp_doc_${code})
    string(FIND "${text}" "\n## Options" at)
    if(at EQUAL -1)
      string(APPEND text "\n${cpp_doc_${code}}")
    else()
      math(EXPR at "${at} + 1")
      string(SUBSTRING "${text}" 0 ${at} head)
      string(SUBSTRING "${text}" ${at} -1 tail)
      set(text "${head}${cpp_doc_${code}}\n${tail}")
    endif()
  endif()
  string(APPEND body "    {\"${code}\", R\"tldoc(${text})tldoc\"},\n")
endforeach()
set(content "// Generated from rules/*/*.md by cmake/EmbedDocs.cmake. Do not edit.
#include <string_view>
#include <unordered_map>

namespace torchlint {

std::string_view rule_doc(std::string_view code) {
  static const std::unordered_map<std::string_view, std::string_view> docs = {
${body}  };
  auto it = docs.find(code);
  return it == docs.end() ? std::string_view() : it->second;
}

}  // namespace torchlint
")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT "${old}" STREQUAL "${content}")
  file(WRITE ${OUTPUT} "${content}")
endif()

# The checklist, embedded the same way (CHECKLIST and CHECKLIST_OUTPUT given).
if(DEFINED CHECKLIST)
  file(READ ${CHECKLIST} checklist_text)
  set(checklist_content "// Generated from checklists/pytorch-best-practices.toml. Do not edit.
#include <string_view>

namespace torchlint {
std::string_view builtin_checklist_toml() { return R\"tldoc(${checklist_text})tldoc\"; }
}  // namespace torchlint
")
  if(EXISTS ${CHECKLIST_OUTPUT})
    file(READ ${CHECKLIST_OUTPUT} old_checklist)
  endif()
  if(NOT "${old_checklist}" STREQUAL "${checklist_content}")
    file(WRITE ${CHECKLIST_OUTPUT} "${checklist_content}")
  endif()
endif()
