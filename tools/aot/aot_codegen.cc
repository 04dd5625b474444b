#include "tools/aot/aot_codegen.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessel/dtype.h"

namespace tessel::tools {
namespace {

using runtime::AotDim;
using runtime::AotKernelPlan;
using runtime::AotParam;

const std::set<std::string>& Reserved() {
  static const auto* words = new std::set<std::string>{
      "alignas",   "alignof",  "and",      "asm",       "auto",    "bool",
      "break",     "case",     "catch",    "char",      "class",   "const",
      "constexpr", "continue", "default",  "delete",    "do",      "double",
      "else",      "enum",     "explicit", "export",    "extern",  "false",
      "float",     "for",      "friend",   "goto",      "if",      "inline",
      "int",       "long",     "mutable",  "namespace", "new",     "noexcept",
      "not",       "nullptr",  "operator", "or",        "private", "protected",
      "public",    "register", "return",   "short",     "signed",  "sizeof",
      "static",    "struct",   "switch",   "template",  "this",    "throw",
      "true",      "try",      "typedef",  "typename",  "union",   "unsigned",
      "using",     "virtual",  "void",     "volatile",  "while",   "xor",
      "stream",    "tessel"};
  return *words;
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// A comment line's text: no line breaks, no comment closers.
std::string CommentText(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::string Bytes(const std::string& image) {
  std::string out;
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < image.size(); ++i) {
    const auto b = static_cast<unsigned char>(image[i]);
    out += "0x";
    out += digits[b >> 4];
    out += digits[b & 15];
    out += ',';
    if (i % 16 == 15 || i + 1 == image.size()) out += '\n';
  }
  return out;
}

// Whether two variants take the same tensors (names, dtypes, shapes).
bool SameParams(const AotKernelPlan& a, const AotKernelPlan& b) {
  if (a.params.size() != b.params.size() || a.sizes != b.sizes) return false;
  for (size_t i = 0; i < a.params.size(); ++i) {
    if (a.params[i].name != b.params[i].name ||
        a.params[i].dtype != b.params[i].dtype ||
        a.params[i].expected != b.params[i].expected) {
      return false;
    }
  }
  return true;
}

// The kernel's C++ parameter names, one per tensor, unique.
std::vector<std::string> ParamNames(const AotKernelPlan& plan) {
  std::vector<std::string> names;
  std::set<std::string> taken;
  for (const AotParam& p : plan.params) {
    std::string name = CppIdentifier(p.name);
    while (taken.count(name)) name += "_";
    taken.insert(name);
    names.push_back(name);
  }
  return names;
}

std::string Signature(const AotKernel& k, bool defaults) {
  std::vector<std::string> args;
  for (const std::string& n : ParamNames(k.variants[0]))
    args.push_back(absl::StrCat("const tessel::aot::Tensor& ", n));
  args.push_back(
      absl::StrCat("CUstream_st* stream", defaults ? " = nullptr" : ""));
  return absl::StrCat("tessel::aot::Status ", k.function, "(",
                      absl::StrJoin(args, ", "), ")");
}

// The shape checks: every tensor against its parameter, binding the sizes.
std::string ShapeChecks(const AotKernelPlan& plan,
                        const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < plan.sizes.size(); ++i) {
    absl::StrAppend(&out, "  int64_t tessel_d", i, " = 0;  // ",
                    CommentText(plan.sizes[i]), "\n");
  }
  auto check = [&](const std::string& call) {
    absl::StrAppend(&out, "  TESSEL_AOT_RETURN_IF_ERROR(tessel::aot::", call,
                    ");\n");
  };
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const AotParam& p = plan.params[i];
    const std::string head = absl::StrCat("tessel_name, ", Quote(p.name), ", ",
                                          Quote(p.expected), ", ", names[i]);
    check(absl::StrCat("CheckRank(", head, ", ", p.shape.size(), ")"));
    for (size_t d = 0; d < p.shape.size(); ++d) {
      const AotDim& dim = p.shape[d];
      if (dim.kind == AotDim::Kind::kConstant) {
        check(absl::StrCat("CheckDim(", head, ", ", d, ", ", dim.value, ")"));
      } else if (dim.kind == AotDim::Kind::kSize) {
        check(absl::StrCat("BindDim(", head, ", ", d, ", ",
                           Quote(plan.sizes[dim.size]), ", &tessel_d", dim.size,
                           ")"));
      }
    }
  }
  for (size_t i = 0; i < plan.params.size(); ++i) {  // once all are bound
    const AotParam& p = plan.params[i];
    for (size_t d = 0; d < p.shape.size(); ++d) {
      const AotDim& dim = p.shape[d];
      if (dim.kind != AotDim::Kind::kExpression) continue;
      check(absl::StrCat("CheckDimExpr(tessel_name, ", Quote(p.name), ", ",
                         Quote(p.expected), ", ", names[i], ", ", d, ", ",
                         dim.cpp, ", ", Quote(dim.text), ")"));
    }
  }
  for (size_t i = 0; i < plan.params.size(); ++i) {
    check(absl::StrCat("CheckPointer(tessel_name, ", Quote(plan.params[i].name),
                       ", ", names[i], ", ", dtype_bytes(plan.params[i].dtype),
                       ")"));
  }
  return out;
}

// One variant's launch: its alignment needs, grid, descriptors, arguments.
std::string VariantLaunch(const AotKernel& k, size_t v,
                          const std::vector<std::string>& names) {
  const AotKernelPlan& plan = k.variants[v];
  std::string out = absl::StrCat("    case ", v, ": {  // ", plan.arch, "\n");
  auto check = [&](const std::string& call) {
    absl::StrAppend(
        &out, "      TESSEL_AOT_RETURN_IF_ERROR(tessel::aot::", call, ");\n");
  };
  std::set<std::string> alignment;  // a need may be recorded per copy
  for (const runtime::AotAlignment& a : plan.alignment) {
    if (!alignment.insert(absl::StrCat(a.param, " ", a.multiple, " ", a.reason))
             .second) {
      continue;
    }
    check(absl::StrCat(
        "CheckAlignment(tessel_name, ", Quote(plan.params[a.param].name), ", ",
        names[a.param], ", ", a.multiple, ", ",
        dtype_bytes(plan.params[a.param].dtype), ", ", Quote(a.reason), ")"));
  }
  absl::StrAppend(&out,
                  "      uint32_t tessel_grid[3] = {1, 1, 1};\n"
                  "      bool tessel_empty = false;\n");
  for (size_t d = 0; d < 3; ++d) {
    check(absl::StrCat("CheckGrid(tessel_name, ", d, ", ", plan.grid[d],
                       ", &tessel_grid[", d, "], &tessel_empty)"));
  }
  absl::StrAppend(
      &out,
      "      if (tessel_empty) return tessel::aot::Status();  // nothing "
      "to do\n");
  std::vector<std::string> args;
  for (size_t i = 0; i < plan.params.size(); ++i) {
    absl::StrAppend(&out, "      uint64_t tessel_p", i, " = ", names[i],
                    ".data;\n");
    args.push_back(absl::StrCat("&tessel_p", i));
  }
  for (size_t i = 0; i < plan.sizes.size(); ++i) {
    absl::StrAppend(&out, "      int32_t tessel_s", i,
                    " = static_cast<int32_t>(tessel_d", i, ");\n");
    args.push_back(absl::StrCat("&tessel_s", i));
  }
  for (size_t m = 0; m < plan.tensor_maps.size(); ++m) {
    const runtime::AotTensorMap& map = plan.tensor_maps[m];
    absl::StrAppend(&out, "      static constexpr int64_t tessel_box", m,
                    "[] = {", absl::StrJoin(map.box, ", "), "};\n");
    absl::StrAppend(&out, "      tessel::aot::TensorMap tessel_map", m, ";\n");
    check(absl::StrCat(
        "EncodeTensorMap(tessel_name, ", Quote(plan.params[map.param].name),
        ", ", names[map.param], ", ", dtype_bytes(plan.params[map.param].dtype),
        ", ", map.data_type, ", tessel_box", m, ", ", map.swizzle_bytes,
        ", &tessel_map", m, ")"));
    args.push_back(absl::StrCat("&tessel_map", m));
  }
  absl::StrAppend(&out, "      void* tessel_args[] = {",
                  absl::StrJoin(args, ", "), "};\n", "      return kKernel_",
                  k.function, ".Launch(tessel_site, tessel_grid, tessel_args, ",
                  args.size(), ");\n", "    }\n");
  return out;
}

std::string Variants(const AotKernel& k) {
  std::string out;
  for (const AotKernelPlan& plan : k.variants) {
    absl::StrAppend(&out, "// ", CommentText(k.description), " for ", plan.arch,
                    ": ", plan.cubin.size(), " bytes\n",
                    "alignas(64) const unsigned char kCubin_", k.function, "_",
                    CppIdentifier(plan.arch), "[] = {\n", Bytes(plan.cubin),
                    "};\n\n");
  }
  absl::StrAppend(&out, "const tessel::aot::KernelVariant kVariants_",
                  k.function, "[] = {\n");
  for (const AotKernelPlan& plan : k.variants) {
    const std::string cubin =
        absl::StrCat("kCubin_", k.function, "_", CppIdentifier(plan.arch));
    absl::StrAppend(&out, "    {", Quote(plan.arch), ", ", cubin, ", sizeof(",
                    cubin, "), ", Quote(plan.entry), ", ", plan.threads, ", ",
                    plan.dynamic_smem_bytes, ", ",
                    plan.persistent ? "true" : "false", ", ", plan.cluster_size,
                    "},\n");
  }
  absl::StrAppend(&out, "};\n\nconst tessel::aot::Kernel kKernel_", k.function,
                  "(", Quote(k.function), ", kVariants_", k.function, ", ",
                  k.variants.size(), ");\n\n");
  return out;
}

std::string Definition(const AotKernel& k) {
  const std::vector<std::string> names = ParamNames(k.variants[0]);
  std::string out = absl::StrCat(
      "const tessel::aot::Kernel& ", k.function, "_kernel() { return kKernel_",
      k.function, "; }\n\n", Signature(k, false), " {\n",
      "  constexpr const char* tessel_name = ", Quote(k.function), ";\n",
      ShapeChecks(k.variants[0], names),
      "  tessel::aot::LaunchSite tessel_site;\n"
      "  TESSEL_AOT_RETURN_IF_ERROR(kKernel_",
      k.function,
      ".Prepare(stream, &tessel_site));\n"
      "  switch (tessel_site.variant) {\n");
  for (size_t v = 0; v < k.variants.size(); ++v)
    absl::StrAppend(&out, VariantLaunch(k, v, names));
  absl::StrAppend(
      &out,
      "  }\n  return tessel::aot::Status(tessel::aot::StatusCode::"
      "kInternal, std::string(tessel_name) + \": no variant chosen\");\n"
      "}\n\n");
  return out;
}

std::string Declaration(const AotKernel& k) {
  const AotKernelPlan& plan = k.variants[0];
  std::vector<std::string> tensors, archs;
  const std::vector<std::string> names = ParamNames(plan);
  for (size_t i = 0; i < plan.params.size(); ++i)
    tensors.push_back(absl::StrCat(names[i], ": ", plan.params[i].expected));
  for (const AotKernelPlan& v : k.variants) archs.push_back(v.arch);
  return absl::StrCat("// ", CommentText(k.description),
                      "\n// tensors: ", absl::StrJoin(tensors, ", "),
                      "\n// archs: ", absl::StrJoin(archs, ", "), "\n",
                      Signature(k, true), ";\n// Its cubins, one per arch.\n",
                      "const tessel::aot::Kernel& ", k.function,
                      "_kernel();\n\n");
}

}  // namespace

std::string CppIdentifier(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_';
    out += ok ? c : '_';
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out = "t_" + out;
  // Keywords, `stream`, and the generated code's own tessel_ locals.
  if (Reserved().count(out) || out.rfind("tessel_", 0) == 0) out += "_";
  return out;
}

absl::StatusOr<AotSources> GenerateAotSources(
    const std::vector<AotKernel>& kernels, const AotNames& names) {
  std::set<std::string> functions;
  for (const AotKernel& k : kernels) {
    if (k.variants.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(k.function, ": no arch to compile it for"));
    }
    if (!functions.insert(k.function).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("two kernels are both named ", k.function));
    }
    for (const AotKernelPlan& v : k.variants) {
      if (!SameParams(k.variants[0], v)) {
        return absl::InvalidArgumentError(absl::StrCat(
            k.function, ": its ", k.variants[0].arch, " and ", v.arch,
            " programs take different tensors; list them as separate "
            "manifest entries, each limited to its archs"));
      }
    }
  }
  const std::string guard =
      absl::StrCat("TESSEL_AOT_", CppIdentifier(names.header), "_H_");
  const std::string first_line = absl::StrCat(
      "// Generated by tessel-aot from ", CommentText(names.manifest),
      ": do not edit (docs/aot.md).\n");
  const std::string open =
      names.name_space.empty()
          ? ""
          : absl::StrCat("namespace ", names.name_space, " {\n\n");
  const std::string close =
      names.name_space.empty()
          ? ""
          : absl::StrCat("}  // namespace ", names.name_space, "\n");
  AotSources out;
  out.header = absl::StrCat(first_line, "#ifndef ", guard, "\n#define ", guard,
                            "\n\n#include \"tessel/aot_runtime.h\"\n\n", open);
  out.source = absl::StrCat(first_line, "#include \"", names.header,
                            ".h\"\n\n#include <cstdint>\n#include <string>\n\n",
                            open, "namespace {\n\n");
  for (const AotKernel& k : kernels) {
    absl::StrAppend(&out.header, Declaration(k));
    absl::StrAppend(&out.source, Variants(k));
  }
  absl::StrAppend(&out.source, "}  // namespace\n\n");
  for (const AotKernel& k : kernels)
    absl::StrAppend(&out.source, Definition(k));
  absl::StrAppend(&out.header, close, "\n#endif  // ", guard, "\n");
  absl::StrAppend(&out.source, close);
  return out;
}

}  // namespace tessel::tools
