// The x86 targets the CPU backend compiles for: the vector width each
// gets, the features it leaves unused (AVX512-FP16, which LLVM 19
// miscompiled a masked store with), and the error for a CPU LLVM does not
// know.
#include "backends/cpu/host_target.h"
#include "ir/error.h"

#include <gtest/gtest.h>

namespace {

using blocc::cpu::target_for_cpu;

bool lists(const std::string &features, const std::string &feature) {
  return ("," + features + ",").find("," + feature + ",") != std::string::npos;
}

TEST(HostTarget, VectorWidthFollowsTheCpusWidestIntegerVectors) {
  EXPECT_EQ(target_for_cpu("x86-64").vector_bits, 128);
  EXPECT_EQ(target_for_cpu("haswell").vector_bits, 256);
  EXPECT_EQ(target_for_cpu("icelake-server").vector_bits, 512);
  EXPECT_EQ(target_for_cpu("sapphirerapids").vector_bits, 512);
}

TEST(HostTarget, Fp16InstructionsStayUnusedWhereTheCpuHasThem) {
  for (const char *cpu : {"sapphirerapids", "graniterapids", "native"}) {
    SCOPED_TRACE(cpu);
    std::string features = target_for_cpu(cpu).features;
    EXPECT_TRUE(lists(features, "-avx512fp16")) << features;
    EXPECT_FALSE(lists(features, "+avx10.1-512")) << features;
  }
  EXPECT_TRUE(lists(target_for_cpu("sapphirerapids").features, "+avx512bf16"));
}

TEST(HostTarget, AnUnknownCpuIsAnErrorNamingIt) {
  try {
    target_for_cpu("pentium-9000");
    FAIL() << "no error";
  } catch (const blocc::Error &e) {
    EXPECT_NE(std::string(e.what()).find("'pentium-9000'"), std::string::npos)
        << e.what();
  }
}

} // namespace
