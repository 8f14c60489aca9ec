// Pipeline frames round-trip their header, entries, tokens and hidden
// vectors (F32 exactly, F16 rounded), and a receiver refuses a frame of
// another session, a stale or future epoch, another plan, or bytes that are
// not a whole frame.
#include <gtest/gtest.h>

#include "dist/frame.h"
#include "encoding/fp16.h"
#include "synapse/error.h"

namespace synapse::dist {
namespace {

FrameHeader header(Wire wire) {
  FrameHeader h;
  h.kind = FrameKind::Hidden;
  h.wire = wire;
  h.wants_token = true;
  h.session = 7;
  h.epoch = 3;
  h.step = 12;
  h.forks = 3;
  h.sent_ns = 123456789;
  h.entries = 2;
  h.tokens = 2;
  h.width = 3;
  h.plan = 0xfeedface;
  return h;
}

const std::vector<FrameEntry> kEntries = {{0, 1, 40}, {3, 1, 17}};
const std::vector<int32_t> kTokens = {5, 9};
const std::vector<float> kHidden = {0.1f, -2.5f, 3e-3f, 7.0f, -0.25f, 1e4f};
const FrameExpectation kExpect{7, 3, 0xfeedface};

ErrorKind decode_error(const std::vector<uint8_t>& bytes, const FrameExpectation& expect) {
  try {
    decode_frame(bytes, expect);
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "decoded";
  return ErrorKind::Io;
}

TEST(PipelineFrame, F32RoundTripsExactly) {
  const Frame f = decode_frame(encode_frame(header(Wire::F32), kEntries, kTokens, kHidden), kExpect);
  EXPECT_EQ(f.header.step, 12u);
  EXPECT_EQ(f.header.forks, 3u);
  EXPECT_EQ(f.header.sent_ns, 123456789);
  EXPECT_TRUE(f.header.wants_token);
  ASSERT_EQ(f.entries.size(), 2u);
  EXPECT_EQ(f.entries[1].sequence, 3);
  EXPECT_EQ(f.entries[1].tokens, 1u);
  EXPECT_EQ(f.entries[1].position, 17);
  EXPECT_EQ(f.tokens, kTokens);
  EXPECT_EQ(f.hidden, kHidden);
}

TEST(PipelineFrame, AFailedStepCarriesItsReason) {
  FrameHeader h = header(Wire::F32);
  h.kind = FrameKind::Failed;
  const Frame f = decode_frame(encode_frame(h, kEntries, kTokens, kHidden, "rank 2: no KV page"), kExpect);
  EXPECT_EQ(f.header.kind, FrameKind::Failed);
  EXPECT_EQ(f.text, "rank 2: no KV page");
  EXPECT_EQ(f.tokens, kTokens);
  // A reason is cut at 4096 bytes.
  EXPECT_EQ(decode_frame(encode_frame(h, kEntries, kTokens, kHidden, std::string(5000, 'x')), kExpect).text.size(),
            4096u);
}

TEST(PipelineFrame, F16RoundsEachValueToHalf) {
  const std::vector<uint8_t> bytes = encode_frame(header(Wire::F16), kEntries, kTokens, kHidden);
  EXPECT_LT(bytes.size(), encode_frame(header(Wire::F32), kEntries, kTokens, kHidden).size());
  const Frame f = decode_frame(bytes, kExpect);
  for (size_t i = 0; i < kHidden.size(); ++i) EXPECT_EQ(f.hidden[i], fp16_to_fp32(fp32_to_fp16(kHidden[i])));
}

TEST(PipelineFrame, ReceiverRefusesAnotherSessionEpochOrPlan) {
  const std::vector<uint8_t> bytes = encode_frame(header(Wire::F32), kEntries, kTokens, kHidden);
  try {
    decode_frame(bytes, {7, 4, 0xfeedface});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidValue);
    EXPECT_NE(std::string(e.what()).find("stale epoch 3, expected 4"), std::string::npos) << e.what();
  }
  try {
    decode_frame(bytes, {7, 3, 0xbeef});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("plan fingerprint"), std::string::npos) << e.what();
  }
  EXPECT_EQ(decode_error(bytes, {8, 3, 0xfeedface}), ErrorKind::InvalidValue);
  EXPECT_EQ(decode_error(bytes, {7, 2, 0xfeedface}), ErrorKind::InvalidValue);  // a future epoch
}

TEST(PipelineFrame, BytesThatAreNotAWholeFrameAreRefused) {
  std::vector<uint8_t> bytes = encode_frame(header(Wire::F32), kEntries, kTokens, kHidden);
  EXPECT_EQ(decode_error(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 10), kExpect), ErrorKind::Truncated);
  EXPECT_EQ(decode_error(std::vector<uint8_t>(bytes.begin(), bytes.end() - 1), kExpect), ErrorKind::Truncated);
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_EQ(decode_error(longer, kExpect), ErrorKind::Truncated);
  std::vector<uint8_t> magic = bytes;
  magic[0] ^= 0xff;
  EXPECT_EQ(decode_error(magic, kExpect), ErrorKind::InvalidValue);
  std::vector<uint8_t> kind = bytes;
  kind[8] = 11;  // past the last kind
  EXPECT_EQ(decode_error(kind, kExpect), ErrorKind::InvalidValue);
  EXPECT_THROW(encode_frame(header(Wire::F32), kEntries, kTokens, std::vector<float>(5)), Error);
  // Entries whose tokens do not add up to the frame's, on either side.
  const std::vector<FrameEntry> short_entries = {{0, 1, 40}, {3, 0, 17}};
  EXPECT_THROW(encode_frame(header(Wire::F32), short_entries, kTokens, kHidden), Error);
  std::vector<uint8_t> miscounted = bytes;
  const size_t second_entry_tokens = 72 + 16 + 4;  // the header, an entry, then the second's sequence id
  miscounted[second_entry_tokens] = 2;
  EXPECT_EQ(decode_error(miscounted, kExpect), ErrorKind::InvalidValue);
  std::vector<uint8_t> negative = bytes;
  negative[72 + 3] = 0x80;  // the first entry's sequence id, its sign bit
  EXPECT_EQ(decode_error(negative, kExpect), ErrorKind::InvalidValue);
}

}  // namespace
}  // namespace synapse::dist
