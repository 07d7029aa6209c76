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
        "collections.OrderedDict", "collections.Counter", "torch.nn.parameter.Parameter",
        "torch.serialization._get_layout", "torch.Size", "torch.Tensor", "torch.device",
        "_codecs.encode", "builtins.bytearray", "builtins.set", "builtins.complex",
        "torch.storage.TypedStorage", "torch.storage.UntypedStorage", "torch.UntypedStorage", "torch.TypedStorage",
        "torch._tensor._rebuild_from_type_v2",
        "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state", "torch._utils._rebuild_qtensor",
        "torch._utils._rebuild_tensor", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor_v3",
        "torch._utils._rebuild_sparse_tensor", "torch._utils._rebuild_meta_tensor_no_storage",
        "torch._utils._rebuild_wrapper_subclass", "torch._utils._rebuild_device_tensor_from_numpy",
        "torch._utils._rebuild_device_tensor_from_cpu_tensor", "torch._utils._rebuild_nested_tensor",
        "torch.per_tensor_affine", "torch.per_channel_affine", "torch.per_tensor_symmetric",
        "torch.per_channel_symmetric", "torch.per_channel_affine_float_qparams",
        "torch.strided", "torch.sparse_coo", "torch.sparse_csr", "torch.sparse_csc", "torch.sparse_bsr", "torch.sparse_bsc",
    };
    for (const char* d : {"float32", "float", "float64", "double", "float16", "half", "bfloat16", "complex32", "chalf",
                          "complex64", "cfloat", "complex128", "cdouble", "uint8", "int8", "int16", "short", "int32",
                          "int", "int64", "long", "bool", "quint8", "qint8", "qint32", "quint4x2", "quint2x4",
                          "float8_e5m2", "float8_e4m3fn", "float8_e5m2fnuz", "float8_e4m3fnuz", "float8_e8m0fnu",
                          "float4_e2m1fn_x2", "uint16", "uint32", "uint64", "bits1x8", "bits2x4", "bits4x2", "bits8",
                          "bits16", "uint1", "uint2", "uint3", "uint4", "uint5", "uint6", "uint7", "int1", "int2", "int3",
                          "int4", "int5", "int6", "int7"}) {
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
    for (const char* q : {"QUInt8", "QInt8", "QInt32", "QUInt4x2", "QUInt2x4"}) s.insert(std::string("torch.") + q + "Storage");
    return s;
  }();
  return names;
}

struct Danger {
  const char* name;    // module (matches submodules too) or module.attribute
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
    Danger{"os", kSystem}, Danger{"posix", kSystem}, Danger{"nt", kSystem}, Danger{"subprocess", kShell},
    Danger{"_posixsubprocess", kShell}, Danger{"_winapi", kShell}, Danger{"pty", kShell}, Danger{"commands", kShell},
    Danger{"popen2", kShell}, Danger{"pipes", kShell}, Danger{"pexpect", kShell}, Danger{"platform", kShell},
    Danger{"multiprocessing", kShell}, Danger{"_multiprocessing", kShell}, Danger{"asyncio", kShell},
    Danger{"venv", kShell}, Danger{"ensurepip", kShell}, Danger{"pip", kShell}, Danger{"webbrowser", kShell},
    Danger{"uuid", kShell}, Danger{"_osx_support", kShell}, Danger{"_aix_support", kShell}, Danger{"distutils", kShell},
    Danger{"setuptools", kShell}, Danger{"numpy.distutils", kShell}, Danger{"mlflow.projects", kShell},
    Danger{"code", kCode}, Danger{"codeop", kCode}, Danger{"runpy", kCode}, Danger{"timeit", kCode},
    Danger{"cProfile", kCode}, Danger{"profile", kCode}, Danger{"pdb", kCode}, Danger{"bdb", kCode},
    Danger{"trace", kCode}, Danger{"doctest", kCode}, Danger{"idlelib", kCode}, Danger{"lib2to3", kCode},
    Danger{"pydoc", kCode}, Danger{"test", kCode}, Danger{"_pyrepl", kCode}, Danger{"marshal", kCode},
Danger{"_interpreters", kCode}, Danger{"_xxsubinterpreters", kCode},
    Danger{"_xxinterpchannels", kCode}, Danger{"interpreters", kCode}, Danger{"numpy.f2py", kCode},
    Danger{"numpy.testing", kCode}, Danger{"torch._dynamo", kCode}, Danger{"torch._inductor", kCode},
    Danger{"torch.jit.unsupported_tensor_ops", kCode}, Danger{"torch.fx.experimental.symbolic_shapes", kCode},
    Danger{"torch.utils.bottleneck", kCode}, Danger{"torch.utils.collect_env", kShell},
    Danger{"torch.utils._config_module", kCode}, Danger{"torch.utils.cpp_extension", kNative},
    Danger{"torch.hub", kCode}, Danger{"torch.package", kCode}, Danger{"torch.utils.data.datapipes.utils.decoder", kNested},
    Danger{"imp", kImport}, Danger{"importlib", kImport}, Danger{"pkgutil", kImport}, Danger{"zipimport", kImport},
    Danger{"site", kImport}, Danger{"inspect", kImport},
    Danger{"operator", kIndirect}, Danger{"_operator", kIndirect}, Danger{"functools", kIndirect},
    Danger{"pickle", kNested}, Danger{"_pickle", kNested}, Danger{"cPickle", kNested}, Danger{"dill", kNested},
    Danger{"cloudpickle", kNested}, Danger{"joblib", kNested}, Danger{"shelve", kNested}, Danger{"jsonpickle", kNested},
    Danger{"socket", kNetwork}, Danger{"_socket", kNetwork}, Danger{"ssl", kNetwork}, Danger{"http", kNetwork},
    Danger{"httplib", kNetwork}, Danger{"urllib", kNetwork}, Danger{"urllib2", kNetwork}, Danger{"urllib3", kNetwork},
    Danger{"requests", kNetwork}, Danger{"aiohttp", kNetwork}, Danger{"httpx", kNetwork}, Danger{"ftplib", kNetwork},
    Danger{"smtplib", kNetwork}, Danger{"imaplib", kNetwork}, Danger{"poplib", kNetwork}, Danger{"nntplib", kNetwork},
    Danger{"telnetlib", kNetwork}, Danger{"xmlrpc", kNetwork}, Danger{"xmlrpclib", kNetwork},
    Danger{"socketserver", kNetwork}, Danger{"SocketServer", kNetwork},
    Danger{"shutil", kFiles}, Danger{"tempfile", kFiles}, Danger{"glob", kFiles}, Danger{"fileinput", kFiles},
    Danger{"_io", kFiles}, Danger{"tarfile", kFiles}, Danger{"zipfile", kFiles}, Danger{"sqlite3", kFiles},
    Danger{"mmap", kFiles}, Danger{"linecache", kFiles}, Danger{"compileall", kCode}, Danger{"py_compile", kCode},
    Danger{"logging", kFiles},
    Danger{"sys", kInterpreter}, Danger{"gc", kInterpreter}, Danger{"atexit", kInterpreter}, Danger{"signal", kInterpreter},
    Danger{"threading", kInterpreter}, Danger{"_thread", kInterpreter}, Danger{"thread", kInterpreter},
    Danger{"ctypes", kNative}, Danger{"_ctypes", kNative}, Danger{"cffi", kNative},
    Danger{"fickling", kScanner}, Danger{"picklescan", kScanner}, Danger{"modelscan", kScanner},
    Danger{"modelaudit", kScanner},
};

// Single attributes of otherwise harmless modules.
constexpr std::array kDangerousNames = {
    Danger{"builtins.eval", kCode}, Danger{"builtins.exec", kCode}, Danger{"builtins.execfile", kCode},
    Danger{"builtins.compile", kCode}, Danger{"builtins.open", kFiles}, Danger{"builtins.file", kFiles},
    Danger{"builtins.getattr", kIndirect}, Danger{"builtins.setattr", kInterpreter}, Danger{"builtins.delattr", kInterpreter},
    Danger{"builtins.apply", kIndirect}, Danger{"builtins.breakpoint", kCode}, Danger{"builtins.__import__", kImport},
    Danger{"builtins.globals", kInterpreter}, Danger{"builtins.locals", kInterpreter}, Danger{"builtins.vars", kInterpreter},
    Danger{"builtins.input", kInterpreter}, Danger{"builtins.help", kCode}, Danger{"builtins.exit", kInterpreter},
    Danger{"builtins.quit", kInterpreter}, Danger{"builtins.reload", kImport}, Danger{"builtins.memoryview", kNative},
    Danger{"io.open", kFiles}, Danger{"io.FileIO", kFiles}, Danger{"io.open_code", kFiles}, Danger{"codecs.open", kFiles},
    Danger{"torch.load", kNested}, Danger{"torch.serialization.load", kNested}, Danger{"torch.serialization._load", kNested},
    Danger{"torch.serialization._legacy_load", kNested}, Danger{"torch.storage._load_from_bytes", kNested},
    Danger{"torch.jit.load", kCode}, Danger{"torch.jit._load_for_lite_interpreter", kCode},
    Danger{"torch.compile", kCode}, Danger{"torch.ops.load_library", kNative}, Danger{"torch.classes.load_library", kNative},
    Danger{"numpy.load", kNested}, Danger{"numpy.fromfile", kFiles}, Danger{"numpy.ctypeslib", kNative},
    Danger{"numpy.lib.npyio.load", kNested}, Danger{"pandas.read_pickle", kNested}, Danger{"pandas.read_csv", kNetwork},
    Danger{"pandas.io.pickle.read_pickle", kNested}, Danger{"copyreg.add_extension", kImport},
    Danger{"copy_reg.add_extension", kImport}, Danger{"types.CodeType", kCode}, Danger{"types.FunctionType", kCode},
    Danger{"types.LambdaType", kCode}, Danger{"types.MethodType", kIndirect}, Danger{"types.ModuleType", kImport},
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

GlobalVerdict dangerous(const char* reason) { return {Verdict::kDangerous, reason}; }

// Python 2 names that `fix_imports` maps (Lib/_compat_pickle.py); only the mappings that
// matter for safety and for torch checkpoints are listed.
const std::unordered_map<std::string, std::string>& import_mapping() {
  static const std::unordered_map<std::string, std::string> m = {
      {"__builtin__", "builtins"}, {"copy_reg", "copyreg"}, {"cPickle", "pickle"}, {"commands", "subprocess"},
      {"urllib2", "urllib.request"}, {"httplib", "http.client"}, {"thread", "_thread"}, {"SocketServer", "socketserver"},
      {"xmlrpclib", "xmlrpc.client"}, {"StringIO", "io"}, {"cStringIO", "io"}, {"UserDict", "collections"},
      {"exceptions", "builtins"}, {"urlparse", "urllib.parse"}, {"Queue", "queue"}, {"cookielib", "http.cookiejar"},
      {"BaseHTTPServer", "http.server"}, {"SimpleHTTPServer", "http.server"}, {"CGIHTTPServer", "http.server"},
  };
  return m;
}

}  // namespace

GlobalName python3_name(const GlobalName& name) {
  GlobalName out = name;
  if (name.module == "__builtin__") {
    static const std::unordered_map<std::string, std::pair<std::string, std::string>> names = {
        {"reduce", {"functools", "reduce"}}, {"intern", {"sys", "intern"}}, {"unichr", {"builtins", "chr"}},
        {"unicode", {"builtins", "str"}}, {"long", {"builtins", "int"}}, {"xrange", {"builtins", "range"}},
        {"raw_input", {"builtins", "input"}}, {"basestring", {"builtins", "str"}}, {"execfile", {"builtins", "execfile"}},
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
    return {Verdict::kAllowed, {}};
  }
  if (allowlist().contains(qualified) ||
      std::find(extra_allowed.begin(), extra_allowed.end(), qualified) != extra_allowed.end()) {
    // torch never allows these modules, even when registered.
    if (name.module != "os" && name.module != "sys" && name.module != "posix" && name.module != "nt") return {Verdict::kAllowed, {}};
  }
  for (const GlobalName* n : std::array<const GlobalName*, 2>{&name, &raw}) {
    std::string full = n->qualified();
    // The module path and every attribute prefix against the module list.
    auto module_parts = split_dots(n->module);
    auto name_parts = split_dots(n->name);
    std::string prefix;
    for (size_t i = 0; i < module_parts.size() + name_parts.size(); ++i) {
      std::string_view part = i < module_parts.size() ? module_parts[i] : name_parts[i - module_parts.size()];
      prefix += (i ? "." : "") + std::string(part);
      for (const auto& d : kDangerousModules) {
        if (prefix == d.name) return dangerous(d.reason);
      }
      for (const auto& d : kDangerousNames) {
        if (prefix == d.name) return dangerous(d.reason);
      }
    }
    // An attribute chain that passes through a dangerous module or interpreter internals.
    for (size_t i = 0; i < name_parts.size(); ++i) {
      std::string_view part = name_parts[i];
      const char* reason = nullptr;
      if (part.size() > 4 && part.starts_with("__") && part.ends_with("__")) return dangerous(kDunder);
      if (i + 1 < name_parts.size() && is_dangerous_root(part, reason)) return dangerous(reason);
    }
    if (n->name.empty() || n->module.empty()) return dangerous(kImport);
  }
  return {Verdict::kUnknown, {}};
}

std::string GlobalReport::display() const {
  return "`" + qualified + "`" + (spelled.empty() ? "" : " (pickled as `" + spelled + "`)");
}

bool hazard_is_dangerous(HazardKind kind) {
  switch (kind) {
    case HazardKind::kBuildOnOther:
    case HazardKind::kOutOfBand: return false;
    default: return true;
  }
}

bool PickleSafety::dangerous() const {
  return std::any_of(globals.begin(), globals.end(), [](const GlobalReport& g) { return g.verdict == Verdict::kDangerous; }) ||
         std::any_of(hazards.begin(), hazards.end(), [](const Hazard& h) { return hazard_is_dangerous(h.kind); });
}

bool PickleSafety::weights_only_loadable() const { return globals.empty() && hazards.empty() && outside_subset.empty(); }

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
        GlobalReport report{python3_name(raw).qualified(), raw.qualified(), v.verdict, v.reason, use.offset, 0, 0};
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
  for (size_t i = 0; i < run.outside_torch.size(); ++i) out.outside_subset.emplace_back(run.outside_torch[i], run.first_offset_outside_torch[i]);
  return out;
}

}  // namespace torchlint::ckpt
