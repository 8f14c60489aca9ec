// Progress: nothing for work that ends quickly, then at most one report per
// interval with bytes, rate and ETA, and a final report once anything was
// shown; a bar rewritten in place on a terminal, whole lines in a log.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "progress/progress.h"

namespace synapse {
namespace {

constexpr uint64_t kMiB = 1 << 20;

// A Progress on a fake clock that records what it writes.
struct Recorder {
  double now = 0;
  std::vector<std::string> writes;
  Progress make(uint64_t total, bool terminal = false) {
    ProgressOutput out;
    out.style = {terminal, /*quiet_s=*/1.0, /*every_s=*/2.0};
    out.sink = [this](std::string_view text) { writes.emplace_back(text); };
    return Progress("load", total, out, [this] { return now; });
  }
};

TEST(Progress, WorkDoneBeforeTheQuietTimePrintsNothing) {
  Recorder r;
  {
    Progress p = r.make(100 * kMiB);
    r.now = 0.5;
    p.update(50 * kMiB);
    p.update(100 * kMiB);
  }
  EXPECT_TRUE(r.writes.empty());
}

TEST(Progress, ReportsAtMostOncePerIntervalThenAFinalLine) {
  Recorder r;
  Progress p = r.make(100 * kMiB);
  r.now = 1.0;
  p.update(10 * kMiB);  // reported
  r.now = 2.5;
  p.update(20 * kMiB);  // too soon
  r.now = 3.0;
  p.update(30 * kMiB);  // reported
  ASSERT_EQ(r.writes.size(), 2u);
  EXPECT_EQ(r.writes[0], "load: 10%, 10.0 MiB of 100.0 MiB, 10.0 MiB/s, ETA 9 s\n");
  r.now = 4.0;
  p.update(100 * kMiB);  // the total: the final line, whatever the throttle
  ASSERT_EQ(r.writes.size(), 3u);
  EXPECT_EQ(r.writes[2], "load: 100%, 100.0 MiB of 100.0 MiB, 25.0 MiB/s, in 4 s\n");
  p.update(100 * kMiB);
  p.finish();
  EXPECT_EQ(r.writes.size(), 3u);
}

TEST(Progress, TerminalRewritesOneBarAndEndsTheLine) {
  Recorder r;
  {
    Progress p = r.make(4 * kMiB, /*terminal=*/true);
    r.now = 2.0;
    p.update(1 * kMiB);
    r.now = 3.0;
  }  // abandoned before the total: the destructor closes the line
  ASSERT_EQ(r.writes.size(), 3u);
  EXPECT_EQ(r.writes[0].front(), '\r');
  EXPECT_NE(r.writes[0].find("[######..................]  25%"), std::string::npos) << r.writes[0];
  EXPECT_NE(r.writes[0].find("512.0 KiB/s"), std::string::npos) << r.writes[0];
  EXPECT_NE(r.writes[0].find("ETA 6 s"), std::string::npos) << r.writes[0];
  EXPECT_EQ(r.writes[2], "\n");
}

TEST(Progress, NoSinkWritesNothing) {
  ProgressOutput quiet;
  double now = 0;
  Progress p("x", 10, quiet, [&now] { return now; });
  now = 100;
  p.update(5);  // no crash, nowhere to write
  p.finish();
}

TEST(Progress, FormatGivesMinutesForLongEtas) {
  EXPECT_EQ(format_progress("q", kMiB, 301 * kMiB, 1.0, false), "q: 0%, 1.00 MiB of 301.0 MiB, 1.00 MiB/s, ETA 5:00\n");
}

}  // namespace
}  // namespace synapse
