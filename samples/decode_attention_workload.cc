#include "samples/decode_attention_workload.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "samples/decode_attention_reference.h"
#include "samples/sample_util.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

// What O holds before the kernels run: an element no block writes fails.
constexpr double kSentinel = 3.0;
// The fp8 cache's dequant scales (K, V).
constexpr double kKScale = 0.5, kVScale = 0.25;

}  // namespace

absl::StatusOr<std::vector<int>> ParseLengths(const std::string& text) {
  std::vector<int> out;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    int v = 0;
    if (!absl::SimpleAtoi(item, &v) || v < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--lens=", text, ": expected sequence lengths >= 0, as 0,1,17,300"));
    }
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<Workload> DecodeAttentionWorkload(DecodeAttentionConfig c,
                                                 const std::vector<int>& lens,
                                                 uint64_t seed) {
  if (lens.empty()) {
    return absl::InvalidArgumentError("decode_attention: no sequences");
  }
  const int P = c.page_size;
  if (P <= 0) return absl::InvalidArgumentError("decode_attention: page_size");
  c.B = static_cast<int>(lens.size());
  const int longest = *std::max_element(lens.begin(), lens.end());
  c.max_pages = std::max({c.max_pages, (longest + P - 1) / P, 1});
  SAMPLES_ASSIGN_OR_RETURN(Program attention, DecodeAttentionProgram(c));
  const int Hkv = DecodeKvHeads(c), rows = DecodeRows(c);
  // Each sequence's pages, shuffled over the pool (one page to spare).
  int64_t used = 0;
  for (int len : lens) used += (len + P - 1) / P;
  const int64_t num_pages = used + 1;
  std::vector<int64_t> order(num_pages);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
  HostTensor table(i32, {c.B, c.max_pages});
  table.fill(-1);
  int64_t next = 0;
  for (int b = 0; b < c.B; ++b) {
    for (int p = 0; p < (lens[b] + P - 1) / P; ++p) {
      table.set_flat_int(int64_t(b) * c.max_pages + p, order[next++]);
    }
  }
  HostTensor seq_lens(i32, {c.B});
  for (int b = 0; b < c.B; ++b) seq_lens.set_flat_int(b, lens[b]);
  const std::vector<int64_t> q_shape = {c.B, c.q_len, c.H, c.D};
  const std::vector<int64_t> kv_shape = {num_pages, P, Hkv, c.D};
  const bool fp8 = c.kv_dtype == fp8_e4m3;

  Workload w;
  w.kernel = DecodeAttentionName(c);
  std::string shown;
  for (int len : lens) absl::StrAppend(&shown, shown.empty() ? "" : ",", len);
  if (shown.size() > 40) shown = absl::StrCat(c.B, "x", longest);
  w.shape = absl::StrCat("lens=", shown, " H=", c.H, " Hkv=", Hkv, " D=", c.D,
                         " q_len=", c.q_len, " page=", P, " splits=", c.splits,
                         " ", DtypeName(c.dtype), fp8 ? " kv=fp8_e4m3" : "");
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["Q"], RandomInput(c.dtype, q_shape, seed));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["K_cache"],
                           RandomInput(c.kv_dtype, kv_shape, seed + 1));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["V_cache"],
                           RandomInput(c.kv_dtype, kv_shape, seed + 2));
  w.tensors["block_table"] = std::move(table);
  w.tensors["seq_lens"] = std::move(seq_lens);
  SAMPLES_ASSIGN_OR_RETURN(
      w.tensors["O"],
      HostTensor::FromDoubles(
          c.dtype, q_shape,
          std::vector<double>(NumElements(q_shape), kSentinel)));
  // The kernel sees the cache flat: [num_pages * page_size, Hkv, D].
  const std::vector<int64_t> flat = {num_pages * P, Hkv, c.D};
  Step step{.program = attention,
            .args = {"Q", Arg("K_cache", flat), Arg("V_cache", flat),
                     "block_table", "seq_lens"}};
  if (fp8) {
    SAMPLES_ASSIGN_OR_RETURN(
        w.tensors["kv_scale"],
        HostTensor::FromDoubles(f32, {2},
                                std::vector<double>{kKScale, kVScale}));
    step.args.push_back("kv_scale");
  }
  if (c.splits == 1) {
    step.args.push_back("O");
    w.steps.push_back(std::move(step));
  } else {
    // The workspace starts as the sentinel too: the combine must not read
    // what a split did not write (it writes every element, -inf / 0 when
    // it saw no key).
    const std::vector<int64_t> o_part = {c.B, Hkv, c.splits, rows, c.D};
    const std::vector<int64_t> lse_part = {c.B, Hkv, rows, c.splits};
    SAMPLES_ASSIGN_OR_RETURN(
        w.tensors["O_partial"],
        HostTensor::FromDoubles(
            f32, o_part, std::vector<double>(NumElements(o_part), kSentinel)));
    SAMPLES_ASSIGN_OR_RETURN(
        w.tensors["LSE_partial"],
        HostTensor::FromDoubles(
            f32, lse_part,
            std::vector<double>(NumElements(lse_part), kSentinel)));
    step.args.push_back("O_partial");
    step.args.push_back("LSE_partial");
    w.steps.push_back(std::move(step));
    SAMPLES_ASSIGN_OR_RETURN(Program combine, DecodeCombineProgram(c));
    w.steps.push_back(
        {.program = combine, .args = {"O_partial", "LSE_partial", "O"}});
  }
  w.outputs = {"O"};
  // The bytes that must be read: every sequence's keys and values once.
  int64_t keys = 0;
  for (int len : lens) keys += len;
  const double kv_bytes = 2.0 * keys * Hkv * c.D * dtype_bytes(c.kv_dtype);
  w.bytes = kv_bytes;
  w.label = BenchLabel{
      .kernel = "decode_attention",
      .pass = "fwd",
      .variant = absl::StrCat(fp8 ? "fp8kv" : "",
                              c.q_len > 1 ? absl::StrCat("q", c.q_len) : ""),
      .dtype = DtypeName(c.dtype),
      .shape = {{"B", c.B},
                {"L", longest},
                {"H", c.H},
                {"Hkv", Hkv},
                {"D", c.D},
                {"page_size", P},
                {"splits", c.splits}},
      .size = absl::StrCat("B", c.B, " L", longest, " H", c.H, " Hkv", Hkv,
                           " D", c.D),
      // No FLOPs: the records (and charts) rate it by GB/s of the keys and
      // values read, as the peers' records.
      .flops = 0};
  const double k_scale = fp8 ? kKScale : 1, v_scale = fp8 ? kVScale : 1;
  w.reference =
      [k_scale,
       v_scale](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    HostTensor o = ReferenceDecodeAttention(
        w.tensors.at("Q"), w.tensors.at("K_cache"), w.tensors.at("V_cache"),
        w.tensors.at("block_table"), w.tensors.at("seq_lens"), k_scale,
        v_scale);
    return std::vector<Expected>{{"O", std::move(o), 1e-2, 1e-2}};
  };
  return w;
}

absl::StatusOr<Program> CopyProgram(int64_t n) {
  if (n <= 0 || n % kCopyTile != 0 || n / kCopyCols > (int64_t{1} << 30)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "copy: n=", n, " must be a positive multiple of ", kCopyTile));
  }
  namespace T = tessel;
  const int rows = static_cast<int>(n / kCopyCols);
  T::ProgramBuilder p("copy_f16");
  auto X = p.tensor("X", {rows, kCopyCols}, f16);
  auto Y = p.tensor("Y", {rows, kCopyCols}, f16);
  {
    T::Kernel kernel(rows / kCopyRows, {.threads = 256});
    auto [bx] = kernel.block_index();
    auto tile = T::alloc_shared({kCopyRows, kCopyCols}, f16, "tile");
    T::copy(X(bx * kCopyRows, 0), tile);
    T::copy(tile, Y(bx * kCopyRows, 0));
  }
  return p.finish();
}

absl::StatusOr<Workload> CopyWorkload(int64_t n) {
  SAMPLES_ASSIGN_OR_RETURN(Program copy, CopyProgram(n));
  Workload w;
  w.kernel = "copy";
  w.shape = absl::StrCat("n=", n, " f16");
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["X"], RandomInput(f16, {n}, 7));
  w.tensors["Y"] = Zeros(f16, {n});
  const std::vector<int64_t> view = {n / kCopyCols, kCopyCols};
  w.steps.push_back(
      {.program = copy, .args = {Arg("X", view), Arg("Y", view)}});
  w.outputs = {"Y"};
  w.bytes = 2.0 * n * 2;  // read and written
  const int64_t mib = n * 2 >> 20;
  w.label = BenchLabel{.kernel = "copy",
                       .pass = "fwd",
                       .dtype = "f16",
                       .shape = {{"bytes", n * 2}},
                       .size = absl::StrCat(mib, "MiB")};
  w.reference = [](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    HostTensor x = w.tensors.at("X");
    HostTensor ref = F64Tensor(x.shape(), x.to_doubles());
    return std::vector<Expected>{{"Y", std::move(ref), 0, 0}};
  };
  return w;
}

}  // namespace tessel::samples
