// The server's position arithmetic: LSP positions (UTF-16 by default) to byte offsets and
// back, and didChange ranges applied to the text.
#include <doctest/doctest.h>

#include "server/language_server.h"
#include "server/text_document.h"

using namespace torchlint::server;

TEST_CASE("positions count UTF-16 code units, UTF-8 bytes or code points") {
  // "é" is 2 bytes and 1 UTF-16 unit; "😀" is 4 bytes and 2 UTF-16 units (a surrogate pair).
  TextDocument doc("x = 'é😀'\nload()\n", 1);
  REQUIRE(doc.line_count() == 3);
  // Byte offset of `'` closing the string: 1+1+1+1+1 + 2 + 4 = 11.
  CHECK(doc.offset_of({0, 8}, PositionEncoding::kUtf16) == 11);
  CHECK(doc.offset_of({0, 11}, PositionEncoding::kUtf8) == 11);
  CHECK(doc.offset_of({0, 7}, PositionEncoding::kUtf32) == 11);
  auto p = doc.position_of(11, PositionEncoding::kUtf16);
  CHECK(p.line == 0);
  CHECK(p.character == 8);
  CHECK(doc.position_of(11, PositionEncoding::kUtf32).character == 7);
  // Second line.
  CHECK(doc.offset_of({1, 4}, PositionEncoding::kUtf16) == 17);
  CHECK(doc.position_of(17, PositionEncoding::kUtf16).line == 1);
  // Finding positions: 1-based line, code-point column.
  CHECK(doc.offset_of_line_column(1, 8) == 11);
}

TEST_CASE("positions past a line's end or the file's end are clamped") {
  TextDocument doc("ab\r\ncd", 1);
  CHECK(doc.line(0) == "ab");
  CHECK(doc.offset_of({0, 99}, PositionEncoding::kUtf16) == 2);  // before "\r\n"
  CHECK(doc.offset_of({7, 0}, PositionEncoding::kUtf16) == 6);
  CHECK(doc.position_of(999, PositionEncoding::kUtf16).line == 1);
  CHECK(doc.position_of(999, PositionEncoding::kUtf16).character == 2);
}

TEST_CASE("incremental changes replace ranges; an inverted range changes nothing") {
  TextDocument doc("model = load(path)\nrun()\n", 1);
  CHECK(doc.replace({0, 17}, {0, 17}, ", weights_only=True", PositionEncoding::kUtf16));
  CHECK(doc.text() == "model = load(path, weights_only=True)\nrun()\n");
  CHECK(doc.replace({1, 0}, {2, 0}, "", PositionEncoding::kUtf16));  // delete a whole line
  CHECK(doc.text() == "model = load(path, weights_only=True)\n");
  CHECK(doc.replace({0, 0}, {0, 0}, "# é\n", PositionEncoding::kUtf16));
  CHECK(doc.line_count() == 3);
  CHECK(doc.line(1) == "model = load(path, weights_only=True)");
  CHECK_FALSE(doc.replace({1, 5}, {1, 2}, "x", PositionEncoding::kUtf16));
  CHECK(doc.line(1) == "model = load(path, weights_only=True)");
}

TEST_CASE("file URIs decode percent escapes; other schemes have no path") {
  auto p = path_from_uri("file:///home/me/my%20project/train.py");
  REQUIRE(p);
  CHECK(p->string() == "/home/me/my project/train.py");
  CHECK(path_from_uri("untitled:Untitled-1") == std::nullopt);
  CHECK(path_from_uri("file://otherhost/x.py") == std::nullopt);
  CHECK(uri_from_path("/home/me/my project/train.py") == "file:///home/me/my%20project/train.py");
  CHECK(path_from_uri(uri_from_path("/tmp/a+b/ü.py"))->string() == "/tmp/a+b/ü.py");
}
