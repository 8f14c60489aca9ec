#include "ir/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace synapse::ir {
namespace {

// FIPS 180-2 / NIST test vectors.
TEST(IrSha256, EmptyString) {
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(IrSha256, Abc) {
  EXPECT_EQ(to_hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(IrSha256, TwoBlockMessage) {
  EXPECT_EQ(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(IrSha256, OneMillionAs) {
  Sha256 hasher;
  const std::string thousand(1000, 'a');
  for (int i = 0; i < 1000; ++i) hasher.update(thousand);
  EXPECT_EQ(to_hex(hasher.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(IrSha256, PiecewiseEqualsWhole) {
  const std::string text(200, 'x');
  Sha256 hasher;
  hasher.update(std::string_view(text).substr(0, 63));
  hasher.update(std::string_view(text).substr(63, 1));
  hasher.update(std::string_view(text).substr(64));
  EXPECT_EQ(hasher.finish(), sha256(text));
  hasher.reset();
  hasher.update(text);
  EXPECT_EQ(hasher.finish(), sha256(text));
}

}  // namespace
}  // namespace synapse::ir
