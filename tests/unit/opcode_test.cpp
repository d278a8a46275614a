// The printer writes opcode_name and the parser reads it back with
// opcode_from_name, so every opcode needs a distinct, non-empty name that
// maps back to itself.
#include "ir/opcode.h"

#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>

namespace blocc::ir {
namespace {

TEST(OpCodeTest, EveryNameIsNonEmptyUniqueAndRoundTrips) {
  std::set<std::string> seen;
  for (int i = 0; i < kNumOpCodes; ++i) {
    auto code = static_cast<OpCode>(i);
    std::string_view name = opcode_name(code);
    EXPECT_FALSE(name.empty()) << "opcode " << i << " has no name";
    EXPECT_TRUE(seen.insert(std::string(name)).second)
        << "opcode " << i << " reuses the name '" << name << "'";
    auto back = opcode_from_name(name);
    ASSERT_TRUE(back.has_value()) << "'" << name << "' does not parse back";
    EXPECT_EQ(static_cast<int>(*back), i) << "'" << name << "'";
  }
}

TEST(OpCodeTest, NamesAreBareWordsThePrinterCanWrite) {
  // A name must lex as one identifier: [a-z_][a-z0-9_]*.
  for (int i = 0; i < kNumOpCodes; ++i) {
    std::string_view name = opcode_name(static_cast<OpCode>(i));
    ASSERT_FALSE(name.empty());
    EXPECT_TRUE(std::isalpha(static_cast<unsigned char>(name[0])) ||
                name[0] == '_')
        << name;
    for (char c : name)
      EXPECT_TRUE(std::islower(static_cast<unsigned char>(c)) ||
                  std::isdigit(static_cast<unsigned char>(c)) || c == '_')
          << name;
  }
}

TEST(OpCodeTest, UnknownNamesDoNotParse) {
  EXPECT_FALSE(opcode_from_name("").has_value());
  EXPECT_FALSE(opcode_from_name("Add").has_value());
  EXPECT_FALSE(opcode_from_name("add ").has_value());
  EXPECT_FALSE(opcode_from_name("frobnicate").has_value());
}

} // namespace
} // namespace blocc::ir
