#include "policy.h"

#include <algorithm>
#include <array>
#include <unordered_map>
#include <unordered_set>

namespace torchlint::ckpt {

namespace {

// torch/_weights_only_unpickler.py `_get_allowed_globals` (torch 2.x), plus the rebuild
// helpers; see checkpoint-formats.md §11.
const std::unordered_set<std::string>& allowlist() {
  static const std::unordered_set<std::string> names = [] {
    std::unordered_set<std::string> s = {
        "collections.OrderedDict",
        "collections.Counter",
        "torch.nn.parameter.Parameter",
        "torch.serialization._get_layout",
        "torch.Size",
        "torch.Tensor",
        "torch.device",
        "_codecs.encode",
        "builtins.bytearray",
        "builtins.set",
        "builtins.complex",
        "torch.storage.TypedStorage",
        "torch.storage.UntypedStorage",
        "torch.UntypedStorage",
        "torch.TypedStorage",
        "torch._tensor._rebuild_from_type_v2",
        "torch._utils._rebuild_parameter",
        "torch._utils._rebuild_parameter_with_state",
        "torch._utils._rebuild_qtensor",
        "torch._utils._rebuild_tensor",
        "torch._utils._rebuild_tensor_v2",
        "torch._utils._rebuild_tensor_v3",
        "torch._utils._rebuild_sparse_tensor",
        "torch._utils._rebuild_meta_tensor_no_storage",
        "torch._utils._rebuild_wrapper_subclass",
        "torch._utils._rebuild_device_tensor_from_numpy",
        "torch._utils._rebuild_device_tensor_from_cpu_tensor",
        "torch._utils._rebuild_nested_tensor",
        "torch.per_tensor_affine",
        "torch.per_channel_affine",
        "torch.per_tensor_symmetric",
        "torch.per_channel_symmetric",
        "torch.per_channel_affine_float_qparams",
        "torch.strided",
        "torch.sparse_coo",
        "torch.sparse_csr",
        "torch.sparse_csc",
        "torch.sparse_bsr",
        "torch.sparse_bsc",
    };
    for (const char* d : {"float32",
                          "float",
                          "float64",
                          "double",
                          "float16",
                          "half",
                          "bfloat16",
                          "complex32",
                          "chalf",
                          "complex64",
                          "cfloat",
                          "complex128",
                          "cdouble",
                          "uint8",
                          "int8",
                          "int16",
                          "short",
                          "int32",
                          "int",
                          "int64",
                          "long",
                          "bool",
                          "quint8",
                          "qint8",
                          "qint32",
                          "quint4x2",
                          "quint2x4",
                          "float8_e5m2",
                          "float8_e4m3fn",
                          "float8_e5m2fnuz",
                          "float8_e4m3fnuz",
                          "float8_e8m0fnu",
                          "float4_e2m1fn_x2",
                          "uint16",
                          "uint32",
                          "uint64",
                          "bits1x8",
                          "bits2x4",
                          "bits4x2",
                          "bits8",
                          "bits16",
                          "uint1",
                          "uint2",
                          "uint3",
                          "uint4",
                          "uint5",
                          "uint6",
                          "uint7",
                          "int1",
                          "int2",
                          "int3",
                          "int4",
                          "int5",
                          "int6",
                          "int7"}) {
      s.insert(std::string("torch.") + d);
    }
    for (const char* t : {"Double", "Float", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool",
                          "ComplexFloat", "ComplexDouble"}) {
      s.insert(std::string("torch.") + t + "Tensor");
      s.insert(std::string("torch.cuda.") + t + "Tensor");
      s.insert(std::string("torch.sparse.") + t + "Tensor");
      s.insert(std::string("torch.") + t + "Storage");
      s.insert(std::string("torch.cuda.") + t + "Storage");
    }
    for (const char* q : {"QUInt8", "QInt8", "QInt32", "QUInt4x2", "QUInt2x4"})
      s.insert(std::string("torch.") + q + "Storage");
    return s;
  }();
  return names;
}

struct Danger {
  const char* name;  // module (matches submodules too) or module.attribute
  const char* reason;
};

constexpr const char* kShell = "runs shell commands or programs";
constexpr const char* kSystem = "controls processes, files and the environment of the machine";
constexpr const char* kCode = "executes or compiles arbitrary Python code";
constexpr const char* kImport = "imports arbitrary modules or resolves arbitrary names";
constexpr const char* kIndirect = "calls functions or reads attributes indirectly (a gadget for any call)";
constexpr const char* kNested = "loads a nested pickle (arbitrary code)";
constexpr const char* kNetwork = "opens network connections";
constexpr const char* kFiles = "reads, writes or deletes files";
constexpr const char* kInterpreter = "changes interpreter or process state";
constexpr const char* kNative = "loads or calls native code";
constexpr const char* kScanner = "tampers with security scanners";
constexpr const char* kDunder = "reaches interpreter internals through a dunder attribute chain";

// Modules: every attribute of them and of their submodules is dangerous.
constexpr std::array kDangerousModules = {
    Danger{"os", kSystem},
    Danger{"posix", kSystem},
    Danger{"nt", kSystem},
    Danger{"subprocess", kShell},
    Danger{"_posixsubprocess", kShell},
    Danger{"_winapi", kShell},
    Danger{"pty", kShell},
    Danger{"commands", kShell},
    Danger{"popen2", kShell},
    Danger{"pipes", kShell},
    Danger{"pexpect", kShell},
    Danger{"platform", kShell},
    Danger{"multiprocessing", kShell},
    Danger{"_multiprocessing", kShell},
    Danger{"asyncio", kShell},
    Danger{"venv", kShell},
    Danger{"ensurepip", kShell},
    Danger{"pip", kShell},
    Danger{"webbrowser", kShell},
    Danger{"uuid", kShell},
    Danger{"_osx_support", kShell},
    Danger{"_aix_support", kShell},
    Danger{"distutils", kShell},
    Danger{"setuptools", kShell},
    Danger{"numpy.distutils", kShell},
    Danger{"mlflow.projects", kShell},
    Danger{"code", kCode},
    Danger{"codeop", kCode},
    Danger{"runpy", kCode},
    Danger{"timeit", kCode},
    Danger{"cProfile", kCode},
    Danger{"profile", kCode},
    Danger{"pdb", kCode},
    Danger{"bdb", kCode},
    Danger{"trace", kCode},
    Danger{"doctest", kCode},
    Danger{"idlelib", kCode},
    Danger{"lib2to3", kCode},
    Danger{"pydoc", kCode},
    Danger{"test", kCode},
    Danger{"_pyrepl", kCode},
    Danger{"marshal", kCode},
    Danger{"_interpreters", kCode},
    Danger{"_xxsubinterpreters", kCode},
    Danger{"_xxinterpchannels", kCode},
    Danger{"interpreters", kCode},
    Danger{"numpy.f2py", kCode},
    Danger{"numpy.testing", kCode},
    Danger{"torch._dynamo", kCode},
    Danger{"torch._inductor", kCode},
    Danger{"torch.jit.unsupported_tensor_ops", kCode},
    Danger{"torch.fx.experimental.symbolic_shapes", kCode},
    Danger{"torch.utils.bottleneck", kCode},
    Danger{"torch.utils.collect_env", kShell},
    Danger{"torch.utils._config_module", kCode},
    Danger{"torch.utils.cpp_extension", kNative},
    Danger{"torch.hub", kCode},
    Danger{"torch.package", kCode},
    Danger{"torch.utils.data.datapipes.utils.decoder", kNested},
    Danger{"imp", kImport},
    Danger{"importlib", kImport},
    Danger{"pkgutil", kImport},
    Danger{"zipimport", kImport},
    Danger{"site", kImport},
    Danger{"inspect", kImport},
    Danger{"operator", kIndirect},
    Danger{"_operator", kIndirect},
    Danger{"functools", kIndirect},
    Danger{"pickle", kNested},
    Danger{"_pickle", kNested},
    Danger{"cPickle", kNested},
    Danger{"dill", kNested},
    Danger{"cloudpickle", kNested},
    Danger{"joblib", kNested},
    Danger{"shelve", kNested},
    Danger{"jsonpickle", kNested},
    Danger{"socket", kNetwork},
    Danger{"_socket", kNetwork},
    Danger{"ssl", kNetwork},
    Danger{"http", kNetwork},
    Danger{"httplib", kNetwork},
    Danger{"urllib", kNetwork},
    Danger{"urllib2", kNetwork},
    Danger{"urllib3", kNetwork},
    Danger{"requests", kNetwork},
    Danger{"aiohttp", kNetwork},
    Danger{"httpx", kNetwork},
    Danger{"ftplib", kNetwork},
    Danger{"smtplib", kNetwork},
    Danger{"imaplib", kNetwork},
    Danger{"poplib", kNetwork},
    Danger{"nntplib", kNetwork},
    Danger{"telnetlib", kNetwork},
    Danger{"xmlrpc", kNetwork},
    Danger{"xmlrpclib", kNetwork},
    Danger{"socketserver", kNetwork},
    Danger{"SocketServer", kNetwork},
    Danger{"shutil", kFiles},
    Danger{"tempfile", kFiles},
    Danger{"glob", kFiles},
    Danger{"fileinput", kFiles},
    Danger{"_io", kFiles},
    Danger{"tarfile", kFiles},
    Danger{"zipfile", kFiles},
    Danger{"sqlite3", kFiles},
    Danger{"mmap", kFiles},
    Danger{"linecache", kFiles},
    Danger{"compileall", kCode},
    Danger{"py_compile", kCode},
    Danger{"logging", kFiles},
    Danger{"sys", kInterpreter},
    Danger{"gc", kInterpreter},
    Danger{"atexit", kInterpreter},
    Danger{"signal", kInterpreter},
    Danger{"threading", kInterpreter},
    Danger{"_thread", kInterpreter},
    Danger{"thread", kInterpreter},
    Danger{"ctypes", kNative},
    Danger{"_ctypes", kNative},
    Danger{"cffi", kNative},
    Danger{"fickling", kScanner},
    Danger{"picklescan", kScanner},
    Danger{"modelscan", kScanner},
    Danger{"modelaudit", kScanner},
};

// Single attributes of otherwise harmless modules.
constexpr std::array kDangerousNames = {
    Danger{"builtins.eval", kCode},
    Danger{"builtins.exec", kCode},
    Danger{"builtins.execfile", kCode},
    Danger{"builtins.compile", kCode},
    Danger{"builtins.open", kFiles},
    Danger{"builtins.file", kFiles},
    Danger{"builtins.getattr", kIndirect},
    Danger{"builtins.setattr", kInterpreter},
    Danger{"builtins.delattr", kInterpreter},
    Danger{"builtins.apply", kIndirect},
    Danger{"builtins.breakpoint", kCode},
    Danger{"builtins.__import__", kImport},
    Danger{"builtins.globals", kInterpreter},
    Danger{"builtins.locals", kInterpreter},
    Danger{"builtins.vars", kInterpreter},
    Danger{"builtins.input", kInterpreter},
    Danger{"builtins.help", kCode},
    Danger{"builtins.exit", kInterpreter},
    Danger{"builtins.quit", kInterpreter},
    Danger{"builtins.reload", kImport},
    Danger{"builtins.memoryview", kNative},
    Danger{"io.open", kFiles},
    Danger{"io.FileIO", kFiles},
    Danger{"io.open_code", kFiles},
    Danger{"codecs.open", kFiles},
    Danger{"torch.load", kNested},
    Danger{"torch.serialization.load", kNested},
    Danger{"torch.serialization._load", kNested},
    Danger{"torch.serialization._legacy_load", kNested},
    Danger{"torch.storage._load_from_bytes", kNested},
    Danger{"torch.jit.load", kCode},
    Danger{"torch.jit._load_for_lite_interpreter", kCode},
    Danger{"torch.compile", kCode},
    Danger{"torch.ops.load_library", kNative},
    Danger{"torch.classes.load_library", kNative},
    Danger{"numpy.load", kNested},
    Danger{"numpy.fromfile", kFiles},
    Danger{"numpy.ctypeslib", kNative},
    Danger{"numpy.lib.npyio.load", kNested},
    Danger{"pandas.read_pickle", kNested},
    Danger{"pandas.read_csv", kNetwork},
    Danger{"pandas.io.pickle.read_pickle", kNested},
    Danger{"copyreg.add_extension", kImport},
    Danger{"copy_reg.add_extension", kImport},
    Danger{"types.CodeType", kCode},
    Danger{"types.FunctionType", kCode},
    Danger{"types.LambdaType", kCode},
    Danger{"types.MethodType", kIndirect},
    Danger{"types.ModuleType", kImport},
    Danger{"types.new_class", kCode},
};

// Module names that, met as an attribute component (`pathlib` + `os.system`), reach the
// dangerous module through an attribute chain.
bool is_dangerous_root(std::string_view component, const char*& reason) {
  for (const auto& d : kDangerousModules) {
    std::string_view n = d.name;
    if (n.find('.') == std::string_view::npos && n == component) {
      reason = d.reason;
      return true;
    }
  }
  return false;
}

std::vector<std::string_view> split_dots(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t dot = s.find('.', start);
    if (dot == std::string_view::npos) dot = s.size();
    out.push_back(s.substr(start, dot - start));
    start = dot + 1;
  }
  return out;
}

GlobalVerdict dangerous(const char* reason, std::string resolved = {}) {
  return {Verdict::kDangerous, reason, std::move(resolved)};
}

// Class (b): reviewed_globals.def.
const std::unordered_map<std::string_view, std::string_view>& reviewed() {
  static const std::unordered_map<std::string_view, std::string_view> names = {
#define REVIEWED(name, why) {name, why},
#include "reviewed_globals.def"
#undef REVIEWED
  };
  return names;
}

// Private aliases modules keep of other modules (`import os as _os` in tempfile,
// `import sys as _sys` in many): an attribute of that name is the module itself.
const std::unordered_map<std::string_view, std::string_view>& module_aliases() {
  static const std::unordered_map<std::string_view, std::string_view> m = {
      {"_os", "os"},
      {"_sys", "sys"},
      {"_subprocess", "subprocess"},
      {"_shutil", "shutil"},
      {"_builtins", "builtins"},
      {"__builtin__", "builtins"},
      {"_bootstrap", "importlib._bootstrap"},
      {"_bootstrap_external", "importlib._bootstrap_external"},
      {"_importlib", "importlib"},
      {"_pickle_module", "pickle"},
      {"_socket_module", "socket"},
      {"_tempfile", "tempfile"},
  };
  return m;
}

// A dotted path reaches what its last module-valued component names: `torch.hub` +
// `sys.modules` is `sys.modules`, `tempfile` + `_os.system` is `os.system`. Components
// after the first are attribute lookups (protocol 4 resolves `a.b.c` by getattr), so a
// component that names a module (a known module, or a module's private alias of one)
// restarts the path there. Returns "" when nothing restarts it.
std::string resolve_through_attributes(const GlobalName& name) {
  auto parts = split_dots(name.module);
  size_t module_parts = parts.size();
  for (auto p : split_dots(name.name)) parts.push_back(p);
  for (size_t i = parts.size(); i-- > 1;) {
    if (i < module_parts) continue;  // module path components are imports, not attributes
    std::string_view part = parts[i];
    std::string_view root;
    const char* reason = nullptr;
    auto alias = module_aliases().find(part);
    if (alias != module_aliases().end())
      root = alias->second;
    else if (is_dangerous_root(part, reason) || part == "builtins")
      root = part;
    if (root.empty()) continue;
    std::string out(root);
    for (size_t j = i + 1; j < parts.size(); ++j) out += "." + std::string(parts[j]);
    return out;
  }
  return {};
}

// The denylist's reason for `qualified` (a module prefix or an exact name), or null.
const char* denylisted(std::string_view qualified) {
  auto parts = split_dots(qualified);
  std::string prefix;
  for (size_t i = 0; i < parts.size(); ++i) {
    prefix += (i ? "." : "") + std::string(parts[i]);
    for (const auto& d : kDangerousModules) {
      if (prefix == d.name) return d.reason;
    }
    for (const auto& d : kDangerousNames) {
      if (prefix == d.name) return d.reason;
    }
  }
  return nullptr;
}

// Python 2 names that `fix_imports` maps (Lib/_compat_pickle.py); only the mappings that
// matter for safety and for torch checkpoints are listed.
const std::unordered_map<std::string, std::string>& import_mapping() {
  static const std::unordered_map<std::string, std::string> m = {
      {"__builtin__", "builtins"},
      {"copy_reg", "copyreg"},
      {"cPickle", "pickle"},
      {"commands", "subprocess"},
      {"urllib2", "urllib.request"},
      {"httplib", "http.client"},
      {"thread", "_thread"},
      {"SocketServer", "socketserver"},
      {"xmlrpclib", "xmlrpc.client"},
      {"StringIO", "io"},
      {"cStringIO", "io"},
      {"UserDict", "collections"},
      {"exceptions", "builtins"},
      {"urlparse", "urllib.parse"},
      {"Queue", "queue"},
      {"cookielib", "http.cookiejar"},
      {"BaseHTTPServer", "http.server"},
      {"SimpleHTTPServer", "http.server"},
      {"CGIHTTPServer", "http.server"},
  };
  return m;
}

}  // namespace

GlobalName python3_name(const GlobalName& name) {
  GlobalName out = name;
  if (name.module == "__builtin__") {
    static const std::unordered_map<std::string, std::pair<std::string, std::string>> names = {
        {"reduce", {"functools", "reduce"}},    {"intern", {"sys", "intern"}},
        {"unichr", {"builtins", "chr"}},        {"unicode", {"builtins", "str"}},
        {"long", {"builtins", "int"}},          {"xrange", {"builtins", "range"}},
        {"raw_input", {"builtins", "input"}},   {"basestring", {"builtins", "str"}},
        {"execfile", {"builtins", "execfile"}},
    };
    auto it = names.find(name.name);
    if (it != names.end()) return {it->second.first, it->second.second};
  }
  auto it = import_mapping().find(name.module);
  if (it != import_mapping().end()) out.module = it->second;
  if (out.module == "torch.tensor") out.module = "torch._tensor";  // torch's load_module_mapping
  return out;
}

GlobalVerdict Policy::classify(const GlobalName& raw, PickleDialect dialect, uint8_t protocol) const {
  (void)protocol;  // fix_imports applies below protocol 3; both spellings are checked anyway
  GlobalName name = python3_name(raw);
  std::string qualified = name.qualified();
  if (dialect == PickleDialect::kTorchScript &&
      (name.module == "__torch__" || name.module.starts_with("__torch__.") || name.module == "torch.jit._pickle")) {
    return {Verdict::kAllowed, {}, {}};
  }
  // Class (a), by the exact name only: a dotted path that reaches an allowed name through
  // other attributes is not what torch allows.
  if (allowlist().contains(qualified) ||
      std::find(extra_allowed.begin(), extra_allowed.end(), qualified) != extra_allowed.end()) {
    // torch never allows these modules, even when registered.
    if (name.module != "os" && name.module != "sys" && name.module != "posix" && name.module != "nt")
      return {Verdict::kAllowed, {}, {}};
  }
  std::string resolved = resolve_through_attributes(name);
  if (!resolved.empty()) {
    if (const char* reason = denylisted(resolved)) return dangerous(reason, resolved);
  }
  for (const GlobalName* n : std::array<const GlobalName*, 2>{&name, &raw}) {
    if (const char* reason = denylisted(n->qualified())) return dangerous(reason);
    // Interpreter internals reached through a dunder attribute chain.
    for (auto part : split_dots(n->name)) {
      if (part.size() > 4 && part.starts_with("__") && part.ends_with("__")) return dangerous(kDunder, resolved);
    }
    if (n->name.empty() || n->module.empty()) return dangerous(kImport);
  }
  // Class (b), again by the exact name.
  auto it = reviewed().find(qualified);
  if (it != reviewed().end() && resolved.empty()) return {Verdict::kReviewed, std::string(it->second), {}};
  // Class (c): nothing says it is safe.
  return {Verdict::kUnreviewed,
          "is not known to be safe: it is on neither torch's weights_only allowlist nor torchlint's reviewed list of "
          "reconstructors that run no code, and unpickling imports its module and runs it",
          resolved};
}

bool Policy::may_allow(std::string_view qualified, std::string& why) {
  size_t dot = qualified.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == qualified.size()) {
    why = "expected `module.name`";
    return false;
  }
  // The module part cannot be told from a dotted attribute path here: try every split.
  for (size_t d = qualified.find('.'); d != std::string_view::npos; d = qualified.find('.', d + 1)) {
    GlobalName name{std::string(qualified.substr(0, d)), std::string(qualified.substr(d + 1))};
    Policy strict;
    GlobalVerdict v = strict.classify(name, PickleDialect::kTorchLoad, 4);
    if (v.verdict == Verdict::kDangerous) {
      why = "it " + v.reason;
      return false;
    }
  }
  return true;
}

std::string GlobalReport::display() const {
  return "`" + qualified + "`" + (spelled.empty() ? "" : " (pickled as `" + spelled + "`)") +
         (resolved.empty() ? "" : " (resolves to `" + resolved + "`)");
}

bool hazard_is_dangerous(HazardKind kind) {
  switch (kind) {
    case HazardKind::kBuildOnOther:
    case HazardKind::kOutOfBand:
      return false;
    default:
      return true;
  }
}

bool PickleSafety::dangerous() const {
  return std::any_of(globals.begin(), globals.end(),
                     [](const GlobalReport& g) { return runs_unsafe_code(g.verdict); }) ||
         std::any_of(hazards.begin(), hazards.end(), [](const Hazard& h) { return hazard_is_dangerous(h.kind); });
}

bool PickleSafety::weights_only_loadable() const {
  return globals.empty() && hazards.empty() && outside_subset.empty();
}

PickleSafety assess(const PickleRun& run, const Policy& policy, PickleDialect dialect) {
  PickleSafety out;
  const ValueGraph& graph = *run.graph;
  std::vector<int32_t> report_of(graph.global_count(), -1);
  std::vector<bool> classified(graph.global_count(), false);
  for (const auto& use : run.globals) {
    if (!classified[use.global]) {
      classified[use.global] = true;
      GlobalVerdict v = policy.classify(graph.global_name(use.global), dialect, use.protocol);
      if (v.verdict != Verdict::kAllowed) {
        report_of[use.global] = static_cast<int32_t>(out.globals.size());
        // Report the name Python 3 resolves (`__builtin__.eval` is `builtins.eval`), and
        // the spelling in the pickle when it differs.
        const GlobalName& raw = graph.global_name(use.global);
        GlobalReport report{
            python3_name(raw).qualified(), raw.qualified(), v.verdict, v.reason, v.resolved, use.offset, 0, 0};
        if (report.spelled == report.qualified) report.spelled.clear();
        out.globals.push_back(std::move(report));
      }
    }
    if (report_of[use.global] >= 0) ++out.globals[report_of[use.global]].uses;
  }
  for (const auto& call : graph.calls()) {
    ValueRef callee(&graph, call.callee);
    if (callee.is_global()) {
      int32_t r = report_of[graph.node(call.callee).a];
      if (r >= 0) ++out.globals[r].calls;
    }
  }
  out.hazards = run.hazards;
  if (dialect == PickleDialect::kTorchScript) {
    // TorchScript pickles build their objects with NEWOBJ + BUILD on `__torch__` classes.
    std::erase_if(out.hazards, [](const Hazard& h) { return h.kind == HazardKind::kBuildOnOther; });
  }
  for (size_t i = 0; i < run.outside_torch.size(); ++i)
    out.outside_subset.emplace_back(run.outside_torch[i], run.first_offset_outside_torch[i]);
  return out;
}

}  // namespace torchlint::ckpt
