// The policy: allowlists decide. torch's weights_only allowlist is safe, the reviewed list
// needs trust, everything else is unsafe; the named denylist only says what an unsafe
// global does (after resolving dotted paths through module attributes).
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
  for (auto [m, n] :
       std::initializer_list<std::pair<const char*, const char*>>{{"collections", "OrderedDict"},
                                                                  {"torch._utils", "_rebuild_tensor_v2"},
                                                                  {"torch._utils", "_rebuild_parameter"},
                                                                  {"torch", "FloatStorage"},
                                                                  {"torch", "BFloat16Storage"},
                                                                  {"torch", "Size"},
                                                                  {"torch", "device"},
                                                                  {"torch", "bfloat16"},
                                                                  {"torch", "float8_e4m3fn"},
                                                                  {"_codecs", "encode"},
                                                                  {"builtins", "set"},
                                                                  {"__builtin__", "set"},
                                                                  {"torch._tensor", "_rebuild_from_type_v2"},
                                                                  {"torch.nn.parameter", "Parameter"},
                                                                  {"torch", "per_tensor_affine"},
                                                                  {"torch.tensor", "_rebuild_from_type_v2"}}) {
    CAPTURE(m);
    CAPTURE(n);
    CHECK(verdict(m, n) == Verdict::kAllowed);
  }
}

TEST_CASE("known-dangerous callables, modules and their submodules") {
  for (auto [m, n] : std::initializer_list<std::pair<const char*, const char*>>{
           {"os", "system"},
           {"posix", "system"},
           {"nt", "system"},
           {"subprocess", "Popen"},
           {"builtins", "eval"},
           {"__builtin__", "exec"},
           {"builtins", "getattr"},
           {"builtins", "__import__"},
           {"runpy", "_run_code"},
           {"pickle", "loads"},
           {"_pickle", "loads"},
           {"functools", "partial"},
           {"operator", "attrgetter"},
           {"torch", "load"},
           {"torch.serialization", "load"},
           {"torch.storage", "_load_from_bytes"},
           {"asyncio.unix_events", "_UnixSubprocessTransport._start"},
           {"torch._inductor.codecache", "compile_file"},
           {"numpy.testing._private.utils", "runstring"},
           {"pip", "main"},
           {"importlib", "import_module"},
           {"pkgutil", "resolve_name"},
           {"ctypes", "CDLL"},
           {"webbrowser", "open"},
           {"commands", "getoutput"},
           {"socket", "create_connection"},
           {"urllib.request", "urlopen"},
           {"io", "FileIO"},
           {"_io", "FileIO"},
           {"types", "CodeType"},
           {"fickling.analysis", "check_safety"},
           {"copy_reg", "add_extension"}}) {
    CAPTURE(m);
    CAPTURE(n);
    CHECK(verdict(m, n) == Verdict::kDangerous);
  }
}

TEST_CASE("attribute chains: through a dangerous module or a dunder attribute") {
  CHECK(verdict("pathlib", "os.system") == Verdict::kDangerous);       // GHSA-5j3x
  CHECK(verdict("numpy", "size.__globals__") == Verdict::kDangerous);  // modelscan #330
  CHECK(verdict("numpy", "__builtins__") == Verdict::kDangerous);
  CHECK(verdict("mylib", "Outer.Inner") == Verdict::kUnreviewed);  // not known to be safe
}

TEST_CASE("dotted paths resolve through other modules' attributes and private aliases") {
  Policy p;
  auto v = p.classify({"tempfile", "_os.system"}, PickleDialect::kTorchLoad, 4);
  CHECK(v.verdict == Verdict::kDangerous);
  CHECK(v.resolved == "os.system");
  v = p.classify({"torch.serialization", "pickle.loads"}, PickleDialect::kTorchLoad, 4);
  CHECK(v.verdict == Verdict::kDangerous);
  CHECK(v.resolved == "pickle.loads");
  v = p.classify({"some.module", "_sys.modules"}, PickleDialect::kTorchLoad, 4);
  CHECK(v.verdict == Verdict::kDangerous);
  CHECK(v.resolved == "sys.modules");
  v = p.classify({"torch.hub", "sys"}, PickleDialect::kTorchLoad, 4);  // the module object itself
  CHECK(v.verdict == Verdict::kDangerous);
  // A private attribute path that resolves to nothing known is still not safe.
  v = p.classify({"torch.nn.modules.module", "_global_hooks.register"}, PickleDialect::kTorchLoad, 4);
  CHECK(v.verdict == Verdict::kUnreviewed);
  // Allowed and reviewed names count only as spelled, never reached by a path.
  CHECK(verdict("torch.serialization", "torch.Size") == Verdict::kUnreviewed);
  CHECK(verdict("torch.serialization", "argparse.Namespace") == Verdict::kUnreviewed);
}

TEST_CASE("the reviewed list needs trust; anything else is not known to be safe") {
  CHECK(verdict("argparse", "Namespace") == Verdict::kReviewed);
  CHECK(verdict("numpy.core.multiarray", "_reconstruct") == Verdict::kReviewed);
  CHECK(verdict("numpy._core.multiarray", "scalar") == Verdict::kReviewed);
  CHECK(verdict("pathlib", "PosixPath") == Verdict::kReviewed);
  CHECK(verdict("types", "SimpleNamespace") == Verdict::kReviewed);
  CHECK(verdict("__main__", "Net") == Verdict::kUnreviewed);
  CHECK(verdict("__torch__.torch.nn.modules.linear", "Linear") == Verdict::kUnreviewed);
  // Library callables that execute strings or load code without a dangerous-looking name.
  for (auto [m, n] :
       std::initializer_list<std::pair<const char*, const char*>>{{"torch.fx.graph_module", "reduce_graph_module"},
                                                                  {"torch.fx.graph_module", "_forward_from_src"},
                                                                  {"yaml", "unsafe_load"},
                                                                  {"yaml", "load"},
                                                                  {"numpy", "save"},
                                                                  {"torch", "save"},
                                                                  {"gzip", "open"},
                                                                  {"bz2", "open"},
                                                                  {"lzma", "open"},
                                                                  {"numpy.lib.format", "read_array"}}) {
    CAPTURE(m);
    CAPTURE(n);
    CHECK(runs_unsafe_code(verdict(m, n)));
  }
}

TEST_CASE("--allow-global refuses what is known to run code") {
  std::string why;
  CHECK(Policy::may_allow("argparse.Namespace", why));
  CHECK(Policy::may_allow("mymodel.Config", why));
  for (const char* name : {"builtins.eval", "builtins.exec", "os.system", "subprocess.Popen", "posix.system",
                           "nt.system", "sys.modules", "tempfile._os.system", "os", "builtins"}) {
    CAPTURE(name);
    CHECK_FALSE(Policy::may_allow(name, why));
  }
  CHECK_FALSE(Policy::may_allow("eval", why));  // not module.name
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
