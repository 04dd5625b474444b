#include "src/runtime/program_index.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include <xxhash.h>

#include "absl/strings/str_cat.h"
#include "jit/counters.h"
#include "jit/kernel_cache.h"
#include "jit/ptx_compile.h"
#include "jit/ptxas_version.h"
#include "nlohmann/json.hpp"
#include "src/ir/op.h"
#include "src/ir/printer.h"
#include "src/ir/structural.h"
#include "src/runtime/lower.h"
#include "src/runtime/program_cache.h"

extern char** environ;

namespace tessel::runtime {
namespace {

using nlohmann::json;

// Bump when a record's fields change meaning.
constexpr int kRecordSchema = 1;

// Variables that say where the cache is or how big, not what a kernel is.
bool ShapesNoKernel(std::string_view name) {
  for (std::string_view where :
       {"TESSEL_CACHE", "TESSEL_CACHE_DIR", "TESSEL_CACHE_MAX_BYTES",
        "TESSEL_MEMORY_CACHE_MAX_BYTES", "TESSEL_LIBCUDA",
        "TESSEL_REQUIRE_GPU"}) {
    if (name == where) return true;
  }
  return false;
}

// Every TESSEL_ variable but those, sorted: the passes' A/B switches among
// them (read once per process, as here). A new switch is keyed without
// being listed; a variable that changes nothing only costs a miss.
const std::string& EnvironmentFingerprint() {
  static const std::string* const fingerprint = [] {
    std::vector<std::string> vars;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      std::string_view var(*e);
      const std::string_view name = var.substr(0, var.find('='));
      if (name.substr(0, 7) == "TESSEL_" && !ShapesNoKernel(name))
        vars.emplace_back(var);
    }
    std::sort(vars.begin(), vars.end());
    std::string out;
    for (const std::string& v : vars) absl::StrAppend(&out, v.size(), ":", v);
    return new std::string(std::move(out));
  }();
  return *fingerprint;
}

bool Dumping() {
  for (const char* var : {"TESSEL_DUMP_IR", "TESSEL_DUMP_SOURCE"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') return true;
  }
  return false;
}

// A grid extent as JSON: constants, the program's dims (by position),
// casts and arithmetic (what EvalInt computes at launch); nullopt for
// anything else.
std::optional<json> GridJson(const ir::Expr& e, const ir::Program& program) {
  if (const auto* i = e.As<ir::IntImmNode>()) {
    return json{"int", static_cast<int>(e.dtype()), i->value};
  }
  if (const auto* v = e.As<ir::VarNode>()) {
    for (size_t d = 0; d < program.dims.size(); ++d) {
      if (program.dims[d].get() == v) return json{"dim", d};
    }
    return std::nullopt;
  }
  if (const auto* c = e.As<ir::CastNode>()) {
    std::optional<json> value = GridJson(c->value, program);
    if (!value) return std::nullopt;
    return json{"cast", static_cast<int>(e.dtype()), *value};
  }
  if (const auto* b = e.As<ir::BinaryNode>()) {
    std::optional<json> x = GridJson(b->a, program);
    std::optional<json> y = GridJson(b->b, program);
    if (!x || !y) return std::nullopt;
    return json{"bin", static_cast<int>(b->op), *x, *y};
  }
  return std::nullopt;
}

// GridJson's inverse; an undefined Expr for anything malformed. (Only
// constructors that check their operands: a record is not trusted.)
ir::Expr GridExpr(const json& j, const ir::Program& program, int depth = 0) {
  if (!j.is_array() || j.empty() || !j[0].is_string() || depth > 64) return {};
  const std::string& kind = j[0].get_ref<const std::string&>();
  auto dtype = [&](const json& t) -> std::optional<DataType> {
    if (!t.is_number_integer()) return std::nullopt;
    const int v = t.get<int>();
    if (v != static_cast<int>(DataType::kI32) &&
        v != static_cast<int>(DataType::kI64) &&
        v != static_cast<int>(DataType::kU32)) {
      return std::nullopt;
    }
    return static_cast<DataType>(v);
  };
  if (kind == "int" && j.size() == 3 && j[2].is_number_integer()) {
    std::optional<DataType> t = dtype(j[1]);
    if (!t) return {};
    return ir::IntImm(*t, j[2].get<int64_t>());
  }
  if (kind == "dim" && j.size() == 2 && j[1].is_number_unsigned() &&
      j[1].get<size_t>() < program.dims.size()) {
    return program.dims[j[1].get<size_t>()];
  }
  if (kind == "cast" && j.size() == 3) {
    std::optional<DataType> t = dtype(j[1]);
    ir::Expr value = GridExpr(j[2], program, depth + 1);
    if (!t || !value.defined()) return {};
    return ir::Cast(*t, value);
  }
  if (kind == "bin" && j.size() == 4 && j[1].is_number_integer()) {
    const int op = j[1].get<int>();
    ir::Expr a = GridExpr(j[2], program, depth + 1);
    ir::Expr b = GridExpr(j[3], program, depth + 1);
    if (!a.defined() || !b.defined() || a.dtype() != b.dtype()) return {};
    for (ir::BinaryOp o :
         {ir::BinaryOp::kAdd, ir::BinaryOp::kSub, ir::BinaryOp::kMul,
          ir::BinaryOp::kDiv, ir::BinaryOp::kMod, ir::BinaryOp::kCeilDiv,
          ir::BinaryOp::kMin, ir::BinaryOp::kMax}) {
      if (op == static_cast<int>(o)) return ir::Binary(o, a, b);
    }
  }
  return {};
}

// A record carries the XXH3-64 of its other fields ("sum"), so that a
// changed digit is a miss, as a changed byte of an entry is.
std::string SumOf(const json& fields) {
  const std::string text = fields.dump();
  return absl::StrCat(
      absl::Hex(XXH3_64bits(text.data(), text.size()), absl::kZeroPad16));
}
void Seal(json& record) { record["sum"] = SumOf(record); }
bool Unseal(json& record) {
  const auto sum = record.find("sum");
  if (sum == record.end() || !sum->is_string()) return false;
  const std::string want = sum->get<std::string>();
  record.erase("sum");
  return SumOf(record) == want;
}

std::shared_ptr<KernelImpl> DecodeJson(const std::string& key,
                                       const std::string& bytes,
                                       const ir::Program& program,
                                       const CompileOptions& options) {
  json r = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!r.is_object() || r.value("schema", 0) != kRecordSchema ||
      r.value("key", "") != key || !Unseal(r)) {
    return nullptr;  // damaged, older, or another key's record
  }
  auto impl = std::make_shared<KernelImpl>();
  impl->name = program.name;
  impl->params = program.params;
  impl->dims = program.dims;
  impl->arch = options.target.arch();
  impl->entry = r.value("entry", "");
  impl->threads = r.value("threads", 0);
  impl->dynamic_smem_bytes = r.value("dynamic_smem_bytes", int64_t{-1});
  impl->persistent = r.value("persistent", false);
  impl->cluster_size = r.value("cluster_size", 0);
  const std::string cubin_key = r.value("cubin_key", "");
  const std::string cubin_arch = r.value("cubin_arch", "");
  if (impl->entry.empty() || impl->threads <= 0 ||
      impl->dynamic_smem_bytes < 0 || impl->cluster_size <= 0 ||
      cubin_key.size() != 32 || cubin_arch.empty()) {
    return nullptr;
  }
  const json& grid = r.value("grid", json());
  const json& signature = r.value("signature", json());
  const json& alignment = r.value("alignment", json());
  const json& maps = r.value("tensor_maps", json());
  const json& schedule = r.value("schedule", json());
  if (!grid.is_array() || !signature.is_array() || !alignment.is_array() ||
      !maps.is_array() || !schedule.is_array()) {
    return nullptr;
  }
  for (const json& g : grid) {
    impl->grid.push_back(GridExpr(g, program));
    if (!impl->grid.back().defined()) return nullptr;
  }
  for (const json& a : signature) {
    if (!a.is_array() || a.size() != 2 || !a[0].is_number_unsigned() ||
        !a[1].is_number_unsigned() ||
        a[0].get<unsigned>() > static_cast<unsigned>(jit::ArgKind::kBytes)) {
      return nullptr;
    }
    impl->signature.push_back(jit::ArgSpec{
        static_cast<jit::ArgKind>(a[0].get<unsigned>()), a[1].get<uint32_t>()});
  }
  const int params = static_cast<int>(program.params.size());
  if (impl->signature.size() !=
      program.params.size() + program.dims.size() + maps.size()) {
    return nullptr;  // not this program's launch
  }
  for (const json& a : alignment) {
    if (!a.is_object()) return nullptr;
    passes::AlignmentRequirement req{.param = a.value("param", -1),
                                     .multiple = a.value("multiple", 0),
                                     .reason = a.value("reason", "")};
    if (req.param < 0 || req.param >= params || req.multiple <= 0)
      return nullptr;
    impl->alignment.push_back(std::move(req));
  }
  for (const json& m : maps) {
    if (!m.is_object() || !m.value("box", json()).is_array()) return nullptr;
    passes::TensorMapParam map{.param = m.value("param", -1),
                               .name = m.value("name", ""),
                               .swizzle_bytes = m.value("swizzle_bytes", -1)};
    for (const json& b : m["box"]) {
      if (!b.is_number_integer()) return nullptr;
      map.box.push_back(b.get<int64_t>());
    }
    if (map.param < 0 || map.param >= params || map.swizzle_bytes < 0)
      return nullptr;
    impl->tensor_maps.push_back(std::move(map));
  }
  for (const json& line : schedule) {
    if (!line.is_string()) return nullptr;
    impl->schedule.push_back(line.get<std::string>());
  }
  // The cubin last: it is the costly read.
  std::optional<jit::CachedCubin> cubin =
      jit::KernelCache::Default().FindCubin(cubin_key, cubin_arch, impl->entry);
  if (!cubin) return nullptr;
  impl->cubin = *std::move(cubin);
  impl->relowering = std::make_shared<const Relowering>(program, options);
  return impl;
}

// A record is not trusted: a field of the wrong type (json::value throws
// for one) is a miss like any other damage.
std::shared_ptr<KernelImpl> Decode(const std::string& key,
                                   const std::string& bytes,
                                   const ir::Program& program,
                                   const CompileOptions& options) {
  try {
    return DecodeJson(key, bytes, program, options);
  } catch (const json::exception&) {
    return nullptr;
  }
}

}  // namespace

std::optional<std::string> ProgramIndexKey(const ir::Program& program,
                                           const CompileOptions& options) {
  if (options.target.kind() != Target::Kind::kCuda || options.isolated ||
      !ProgramCache::Applies(options) || Dumping()) {
    return std::nullopt;
  }
  // Its version, not its path: a record travels to machines whose toolkit
  // is elsewhere.
  const std::string ptxas = jit::PtxasAvailable()
                                ? absl::StrCat("ptxas ", jit::PtxasVersion())
                                : "no ptxas";
  const std::string fields = absl::StrCat(
      "tessel-program-index ", kRecordSchema, "\n",
      std::string(LoweringBuildId()), "\n",
      ProgramCache::KeyOf(options).options, "\n", EnvironmentFingerprint(),
      "\n", ptxas, "\n", ir::StructuralKey(program));
  const XXH128_hash_t h = XXH3_128bits(fields.data(), fields.size());
  return absl::StrCat(absl::Hex(h.high64, absl::kZeroPad16),
                      absl::Hex(h.low64, absl::kZeroPad16));
}

std::shared_ptr<KernelImpl> FindIndexed(const std::string& key,
                                        const ir::Program& program,
                                        const CompileOptions& options) {
  std::optional<std::string> bytes =
      jit::KernelCache::Default().disk().LoadRecord(key);
  if (!bytes) return nullptr;
  std::shared_ptr<KernelImpl> impl = Decode(key, *bytes, program, options);
  if (impl != nullptr) jit::internal::Count(jit::internal::Counter::kIndexHits);
  return impl;
}

void RecordIndexed(const std::string& key, const ir::Program& program,
                   const KernelImpl& impl, jit::DiskCache& disk) {
  if (impl.cubin.cubin == nullptr || impl.cubin.key.size() != 32) return;
  json grid = json::array();
  for (const ir::Expr& g : impl.grid) {
    std::optional<json> j = GridJson(g, program);
    if (!j) return;
    grid.push_back(*std::move(j));
  }
  json signature = json::array();
  for (const jit::ArgSpec& a : impl.signature)
    signature.push_back({static_cast<unsigned>(a.kind), a.size});
  json alignment = json::array();
  for (const passes::AlignmentRequirement& a : impl.alignment) {
    alignment.push_back(
        {{"param", a.param}, {"multiple", a.multiple}, {"reason", a.reason}});
  }
  json maps = json::array();
  for (const passes::TensorMapParam& m : impl.tensor_maps) {
    maps.push_back({{"param", m.param},
                    {"name", m.name},
                    {"box", m.box},
                    {"swizzle_bytes", m.swizzle_bytes}});
  }
  json record = {{"schema", kRecordSchema},
                 {"key", key},
                 {"program", program.name},
                 {"cubin_key", impl.cubin.key},
                 {"cubin_arch", impl.cubin.cubin->arch},
                 {"entry", impl.entry},
                 {"threads", impl.threads},
                 {"dynamic_smem_bytes", impl.dynamic_smem_bytes},
                 {"persistent", impl.persistent},
                 {"cluster_size", impl.cluster_size},
                 {"grid", grid},
                 {"signature", signature},
                 {"alignment", alignment},
                 {"tensor_maps", maps},
                 {"schedule", impl.schedule}};
  // Names and schedule lines are the user's bytes: not UTF-8 is replaced,
  // so that the record always writes (and reads back to the same sum).
  record =
      json::parse(record.dump(-1, ' ', false, json::error_handler_t::replace));
  Seal(record);
  disk.StoreRecord(key, record.dump());
}

void IndexLowered(const ir::Program& program, const CompileOptions& options,
                  const Lowered& lowered, const jit::CachedCubin& cubin,
                  jit::DiskCache& disk) {
  if (!disk.enabled()) return;
  std::optional<std::string> key = ProgramIndexKey(program, options);
  if (!key) return;
  RecordIndexed(*key, program,
                *KernelFromLowered(program, options, lowered, cubin), disk);
}

void Relowering::Run() const {
  absl::call_once(once_, [this] {
    absl::StatusOr<Lowered> lowered = Lower(program_, options_);
    if (!lowered.ok()) {
      // The same build lowered it before; never expected.
      source_ = absl::StrCat("// the passes failed when run again: ",
                             lowered.status().message(), "\n");
      return;
    }
    source_ = lowered->generated.source.text;
    lowered_ir_ = ir::ToString(lowered->state.program);
  });
}

const std::string& Relowering::source() const {
  Run();
  return source_;
}

const std::string& Relowering::lowered_ir() const {
  Run();
  return lowered_ir_;
}

}  // namespace tessel::runtime
