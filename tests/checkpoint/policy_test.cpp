// The policy: torch's weights_only allowlist decides what is safe; the named denylist
// and the name-independent hazards decide what is dangerous.
#include <doctest/doctest.h>

#include "checkpoint/policy.h"

using namespace torchlint::ckpt;

namespace {
Verdict verdict(const std::string& module, const std::string& name, PickleDialect d = PickleDialect::kTorchLoad,
                const Policy& policy = Policy{}) {
  return policy.classify({module, name}, d, 2).verdict;
}
}  // namespace

TEST_CASE("torch's weights_only allowlist is allowed") {
  for (auto [m, n] : std::initializer_list<std::pair<const char*, const char*>>{
           {"collections", "OrderedDict"}, {"torch._utils", "_rebuild_tensor_v2"}, {"torch._utils", "_rebuild_parameter"},
           {"torch", "FloatStorage"}, {"torch", "BFloat16Storage"}, {"torch", "Size"}, {"torch", "device"},
           {"torch", "bfloat16"}, {"torch", "float8_e4m3fn"}, {"_codecs", "encode"}, {"builtins", "set"},
           {"__builtin__", "set"}, {"torch._tensor", "_rebuild_from_type_v2"}, {"torch.nn.parameter", "Parameter"},
           {"torch", "per_tensor_affine"}, {"torch.tensor", "_rebuild_from_type_v2"}}) {
    CAPTURE(m);
    CAPTURE(n);
    CHECK(verdict(m, n) == Verdict::kAllowed);
  }
}

TEST_CASE("known-dangerous callables, modules and their submodules") {
  for (auto [m, n] : std::initializer_list<std::pair<const char*, const char*>>{
           {"os", "system"}, {"posix", "system"}, {"nt", "system"}, {"subprocess", "Popen"}, {"builtins", "eval"},
           {"__builtin__", "exec"}, {"builtins", "getattr"}, {"builtins", "__import__"}, {"runpy", "_run_code"},
           {"pickle", "loads"}, {"_pickle", "loads"}, {"functools", "partial"}, {"operator", "attrgetter"},
           {"torch", "load"}, {"torch.serialization", "load"}, {"torch.storage", "_load_from_bytes"},
           {"asyncio.unix_events", "_UnixSubprocessTransport._start"}, {"torch._inductor.codecache", "compile_file"},
           {"numpy.testing._private.utils", "runstring"}, {"pip", "main"}, {"importlib", "import_module"},
           {"pkgutil", "resolve_name"}, {"ctypes", "CDLL"}, {"webbrowser", "open"}, {"commands", "getoutput"},
           {"socket", "create_connection"}, {"urllib.request", "urlopen"}, {"io", "FileIO"}, {"_io", "FileIO"},
           {"types", "CodeType"}, {"fickling.analysis", "check_safety"}, {"copy_reg", "add_extension"}}) {
    CAPTURE(m);
    CAPTURE(n);
    CHECK(verdict(m, n) == Verdict::kDangerous);
  }
}

TEST_CASE("attribute chains: through a dangerous module or a dunder attribute") {
  CHECK(verdict("pathlib", "os.system") == Verdict::kDangerous);         // GHSA-5j3x
  CHECK(verdict("numpy", "size.__globals__") == Verdict::kDangerous);     // modelscan #330
  CHECK(verdict("numpy", "__builtins__") == Verdict::kDangerous);
  CHECK(verdict("mylib", "Outer.Inner") == Verdict::kUnknown);           // a nested class is only unknown
}

TEST_CASE("anything else is unknown: not loadable with weights_only, not known to be dangerous") {
  CHECK(verdict("argparse", "Namespace") == Verdict::kUnknown);
  CHECK(verdict("numpy.core.multiarray", "_reconstruct") == Verdict::kUnknown);
  CHECK(verdict("__main__", "Net") == Verdict::kUnknown);
  CHECK(verdict("pathlib", "PosixPath") == Verdict::kUnknown);
  CHECK(verdict("types", "SimpleNamespace") == Verdict::kUnknown);
  CHECK(verdict("__torch__.torch.nn.modules.linear", "Linear") == Verdict::kUnknown);
}

TEST_CASE("TorchScript dialect resolves __torch__ classes and the jit helpers") {
  CHECK(verdict("__torch__.torch.nn.modules.linear", "Linear", PickleDialect::kTorchScript) == Verdict::kAllowed);
  CHECK(verdict("torch.jit._pickle", "build_intlist", PickleDialect::kTorchScript) == Verdict::kAllowed);
  CHECK(verdict("os", "system", PickleDialect::kTorchScript) == Verdict::kDangerous);
}

TEST_CASE("user allowlist (add_safe_globals) - but never os, sys, posix, nt") {
  Policy p;
  p.extra_allowed = {"argparse.Namespace", "os.getcwd"};
  CHECK(verdict("argparse", "Namespace", PickleDialect::kTorchLoad, p) == Verdict::kAllowed);
  CHECK(verdict("os", "getcwd", PickleDialect::kTorchLoad, p) == Verdict::kDangerous);
}

TEST_CASE("py2 names are mapped as fix_imports maps them") {
  CHECK(python3_name({"__builtin__", "eval"}).qualified() == "builtins.eval");
  CHECK(python3_name({"copy_reg", "_reconstructor"}).qualified() == "copyreg._reconstructor");
  CHECK(python3_name({"__builtin__", "reduce"}).qualified() == "functools.reduce");
  CHECK(python3_name({"torch.tensor", "_rebuild_from_type_v2"}).qualified() == "torch._tensor._rebuild_from_type_v2");
}
