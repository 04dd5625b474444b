// T::bitcast without a GPU: the call checks the width and the pair at the
// user's line; the interpreter gives std::bit_cast's bits; the generated
// CUDA uses CUDA's reinterpreting intrinsics and the PTX emitter a mov
// (NVRTC / ptxas compile both, sm_90a and sm_80). The launches are
// bitcast_gpu_test.cc's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "src/interp/numeric.h"
#include "tessel/compile.h"
#include "tessel/interpret.h"
#include "tests/codegen/bitcast_cases.h"
#include "tests/common/error_at.h"
#include "tests/common/generated_code.h"

namespace tessel::testing {
namespace {

namespace T = tessel;
using ::testing::HasSubstr;

absl::Status Casting(DataType from, DataType to, int* line) {
  T::ProgramBuilder p("bad_bitcast");
  auto X = p.tensor("X", {128}, from);
  auto Y = p.tensor("Y", {128}, to);
  {
    T::Kernel kernel(1, {.threads = 128});
    for (auto i : T::Parallel(128)) {
      *line = __LINE__ + 1;
      Y(i) = T::bitcast(X(i), to);
    }
  }
  return p.finish().status();
}

TEST(Bitcast, AnotherWidthIsRefusedAtTheCall) {
  int line = 0;
  absl::Status s = Casting(DataType::kF32, DataType::kF16, &line);
  ExpectInvalidArgumentAt(
      s, "bitcast_test.cc", line,
      {"T::bitcast", "f32 has 32 bits and f16 16", "T::cast converts"});
}

TEST(Bitcast, AnUnsupportedPairIsRefusedAtTheCall) {
  int line = 0;
  absl::Status s = Casting(DataType::kI64, DataType::kF64, &line);
  ExpectInvalidArgumentAt(s, "bitcast_test.cc", line,
                          {"T::bitcast", "from i64 to f64 is not supported"});
}

// A bitcast of a uniform value is uniform (a let may hold it).
TEST(Bitcast, OfAUniformValueIsUniform) {
  T::ProgramBuilder p("uniform_bitcast");
  auto X = p.tensor("X", {128}, T::f32);
  auto Y = p.tensor("Y", {128}, T::i32);
  {
    T::Kernel kernel(1, {.threads = 128});
    auto bits = T::let(T::bitcast(X(0), T::i32), "bits");
    for (auto i : T::Parallel(128)) Y(i) = bits;
  }
  absl::StatusOr<Program> program = p.finish();
  ASSERT_TRUE(program.ok()) << program.status();
  HostTensor x(DataType::kF32, {128}), y(DataType::kI32, {128});
  x.set_flat(0, -2.5);
  ASSERT_TRUE(interpret(*program, {&x, &y}).ok());
  EXPECT_EQ(y.get_flat(77), std::bit_cast<int32_t>(-2.5f));
}

std::vector<HostTensor*> Ptrs(std::vector<HostTensor>& a) {
  std::vector<HostTensor*> p;
  for (HostTensor& t : a) p.push_back(&t);
  return p;
}

TEST(Bitcast, ThirtyTwoBitWordsMatchStdBitCast) {
  absl::StatusOr<Program> program = Bitcast32Program();
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<HostTensor> a = MakeBitcast32Args();
  ASSERT_TRUE(interpret(*program, Ptrs(a)).ok());
  for (int i = 0; i < kBitcastN; ++i) {
    const float x = static_cast<float>(a[0].get_flat(i));
    const uint32_t u = std::bit_cast<uint32_t>(x);
    ASSERT_EQ(a[2].get_flat(i), std::bit_cast<int32_t>(x)) << i;
    ASSERT_EQ(a[3].get_flat(i), std::bit_cast<float>(u + 1)) << i;
    ASSERT_EQ(a[4].get_flat(i), u >> 31) << i;
    const uint64_t h = interp::EncodeFloat(DataType::kF16, a[1].get_flat(i));
    ASSERT_EQ(a[5].get_flat(i), interp::DecodeFloat(DataType::kBF16, h)) << i;
  }
}

TEST(Bitcast, SixteenBitValuesMatchTheirEncoding) {
  absl::StatusOr<Program> program = Bitcast16Program();
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<HostTensor> a = MakeBitcast16Args();
  ASSERT_TRUE(interpret(*program, Ptrs(a)).ok());
  for (int i = 0; i < kBitcastN; ++i) {
    const uint64_t h = interp::EncodeFloat(DataType::kF16, a[0].get_flat(i));
    ASSERT_EQ(a[2].get_flat(i), static_cast<int16_t>(h)) << i;
    // -0.0 == 0.0: compare the bits.
    ASSERT_EQ(interp::EncodeFloat(DataType::kF16, a[3].get_flat(i)), h) << i;
    const uint64_t b = interp::EncodeFloat(DataType::kBF16, a[1].get_flat(i));
    ASSERT_EQ(interp::EncodeFloat(DataType::kF16, a[4].get_flat(i)), b) << i;
  }
}

TEST(Bitcast, CudaAndPtxSpellItAndCompile) {
  for (bool wide : {true, false}) {
    absl::StatusOr<Program> program =
        wide ? Bitcast32Program() : Bitcast16Program();
    ASSERT_TRUE(program.ok()) << program.status();
    for (Target t : {Target::sm90a(), Target::sm80()}) {
      SCOPED_TRACE(t.sm());
      const GeneratedCode code = Generate(*program, t);
      const std::string& cuda = code.cuda;
      if (wide) {
        EXPECT_THAT(cuda, HasSubstr("__float_as_int(X["));
        EXPECT_THAT(cuda, HasSubstr("__uint_as_float((__float_as_uint("));
        EXPECT_THAT(cuda, HasSubstr("__short_as_bfloat16(__half_as_short(H["));
        // The PTX emitter spells the kernel: movs between register kinds.
        EXPECT_THAT(code.ptx, HasSubstr("mov.b32"));
        EXPECT_THAT(code.ptx, HasSubstr("mov.b16"));
      } else {
        EXPECT_THAT(cuda, HasSubstr("__short_as_half(__bfloat16_as_short(B["));
        EXPECT_THAT(cuda, HasSubstr("__half_as_short(H["));
      }
      ExpectCompilesBothWays(*program, t);
    }
  }
}

}  // namespace
}  // namespace tessel::testing
