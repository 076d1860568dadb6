// Renders `moetrace report --html` in a real browser (Debian's chromium,
// headless) and checks that the page is not blank, that the browser logs no
// console error or blocked load, and that names with markup show as text.
// ctest label `browser`; scripts/test.sh installs chromium. Without chromium
// this test FAILS (it exists to run in a browser).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "analyzer/stable_json.h"
#include "formats/native/native_writer.h"
#include "formats/trace_io.h"
#include "reports/test_traces.h"
#include "tests/run_command.h"

namespace moetrace::testing {
namespace {

namespace fs = std::filesystem;

std::string FindChromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    const char* path = std::getenv("PATH");
    std::stringstream ss(path ? path : "/usr/bin");
    std::string dir;
    while (std::getline(ss, dir, ':')) {
      const fs::path p = fs::path(dir) / name;
      if (fs::exists(p)) return p.string();
    }
  }
  return "";
}

struct Shell {
  int code;
  std::string out;
};
Shell RunShell(const std::string& cmd) {
  Shell s{-1, ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return s;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) s.out.append(buf, n);
  const int st = pclose(p);
  s.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  return s;
}

struct Image {
  uint32_t width = 0, height = 0;
  int channels = 0;
  std::vector<uint8_t> pixels;  // unfiltered rows, `channels` bytes per pixel
};

uint32_t Be32(const std::string& s, size_t p) {
  return (uint32_t(uint8_t(s[p])) << 24) | (uint32_t(uint8_t(s[p + 1])) << 16) |
         (uint32_t(uint8_t(s[p + 2])) << 8) | uint32_t(uint8_t(s[p + 3]));
}

// A minimal PNG decoder: 8-bit RGB or RGBA, not interlaced (what Chromium writes).
bool DecodePng(const std::string& png, Image* img, std::string* why) {
  if (png.size() < 8 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return *why = "not a PNG", false;
  std::string idat;
  int bit_depth = 0, color = 0, interlace = 0;
  for (size_t p = 8; p + 8 <= png.size();) {
    const uint32_t len = Be32(png, p);
    const std::string type = png.substr(p + 4, 4);
    if (p + 12 + len > png.size()) return *why = "truncated chunk", false;
    if (type == "IHDR") {
      img->width = Be32(png, p + 8);
      img->height = Be32(png, p + 12);
      bit_depth = uint8_t(png[p + 16]);
      color = uint8_t(png[p + 17]);
      interlace = uint8_t(png[p + 20]);
    } else if (type == "IDAT") {
      idat.append(png, p + 8, len);
    }
    p += 12 + len;
  }
  if (bit_depth != 8 || (color != 2 && color != 6) || interlace != 0) {
    return *why = "unsupported PNG layout color=" + std::to_string(color), false;
  }
  img->channels = color == 6 ? 4 : 3;
  const size_t stride = size_t(img->width) * img->channels;
  std::vector<uint8_t> raw((stride + 1) * img->height);
  uLongf raw_len = raw.size();
  if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
      raw_len != raw.size()) {
    return *why = "bad zlib data", false;
  }
  img->pixels.assign(stride * img->height, 0);
  const int bpp = img->channels;
  for (uint32_t y = 0; y < img->height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    uint8_t* out = &img->pixels[y * stride];
    const uint8_t* prev = y ? &img->pixels[(y - 1) * stride] : nullptr;
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= size_t(bpp) ? out[x - bpp] : 0;
      const int b = prev ? prev[x] : 0;
      const int c = prev && x >= size_t(bpp) ? prev[x - bpp] : 0;
      int v = in[x];
      switch (filter) {
        case 0: break;
        case 1: v += a; break;
        case 2: v += b; break;
        case 3: v += (a + b) / 2; break;
        case 4: {
          const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
          v += (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
          break;
        }
        default: return *why = "bad filter", false;
      }
      out[x] = uint8_t(v);
    }
  }
  return true;
}

class BrowserReport : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = FindChromium();
    ASSERT_FALSE(chromium_.empty()) << "chromium not found: install it with scripts/install-deps.sh chromium";
    dir_ = TempDir("browser");
    const std::string trace = dir_ + "/hostile.mtrace";
    {
      MemorySource source(MakeHostileTrace());
      auto sink = CreateNativeSink(trace);
      Copy(source, *sink);
    }
    html_ = dir_ + "/report.html";
    const CommandResult r = RunMoetrace("report " + trace + " --html " + html_);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  std::string Chromium(const std::string& args) {
    // Flags that keep a headless run offline and quiet (no sync, updates, GPU).
    return chromium_ + " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage"
           " --disable-background-networking --disable-component-update --disable-sync"
           " --no-first-run --user-data-dir=" + dir_ + "/profile " + args;
  }

  std::string chromium_, dir_, html_;
};

TEST_F(BrowserReport, ScreenshotIsNotBlankAndNoConsoleErrors) {
  const std::string png = dir_ + "/shot.png";
  const Shell s = RunShell(Chromium("--enable-logging=stderr --v=0 --window-size=1280,2000 --screenshot=" + png +
                               " file://" + html_ + " 2>&1"));
  ASSERT_TRUE(fs::exists(png)) << s.out;
  // Console messages (errors, CSP violations: "Refused to load ...") are
  // logged as CONSOLE lines; the page has no script, so there must be none.
  std::istringstream lines(s.out);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.find("CONSOLE"), std::string::npos) << line;
    EXPECT_EQ(line.find("Refused to"), std::string::npos) << line;
    EXPECT_EQ(line.find("Content Security Policy"), std::string::npos) << line;
  }
  std::ifstream f(png, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  Image img;
  std::string why;
  ASSERT_TRUE(DecodePng(ss.str(), &img, &why)) << why;
  EXPECT_EQ(img.width, 1280u);
  EXPECT_EQ(img.height, 2000u);
  // Not blank: many non-white pixels, and the chart colours are there.
  size_t non_white = 0;
  std::set<uint32_t> colours;
  bool compute_blue = false;
  for (size_t i = 0; i + 2 < img.pixels.size(); i += img.channels) {
    const uint8_t r = img.pixels[i], g = img.pixels[i + 1], b = img.pixels[i + 2];
    if (r < 240 || g < 240 || b < 240) ++non_white;
    colours.insert(uint32_t(r) << 16 | uint32_t(g) << 8 | b);
    compute_blue |= r == 0x4e && g == 0x79 && b == 0xa7;  // .c-compute
  }
  const double share = double(non_white) / (double(img.width) * img.height);
  EXPECT_GT(share, 0.05) << "non-white share " << share;
  EXPECT_GT(colours.size(), 50u);
  EXPECT_TRUE(compute_blue) << "no compute bar rendered";
}

TEST_F(BrowserReport, MarkupInNamesShowsAsText) {
  const Shell s = RunShell(Chromium("--dump-dom file://" + html_ + " 2>/dev/null"));
  ASSERT_EQ(s.code, 0);
  ASSERT_NE(s.out.find("</html>"), std::string::npos) << s.out.substr(0, 2000);
  // The DOM has no script element: the names stayed text (serialized escaped).
  EXPECT_EQ(s.out.find("<script"), std::string::npos);
  EXPECT_NE(s.out.find("&lt;script&gt;alert(\"pwn\" &amp; 'x')&lt;/script&gt;"), std::string::npos)
      << s.out.substr(0, 4000);
}

// The RL section's phase timeline in a browser: `report` of a saved analysis
// whose only content is an RL section (reports/test_traces.h) draws the
// rollout boxes (generate_sequences green) and keeps the hostile role name
// as text.
TEST_F(BrowserReport, RlTimelineRendersAndNamesStayText) {
  const std::string json = dir_ + "/rl.json", html = dir_ + "/rl.html", png = dir_ + "/rl.png";
  analysis::Analysis a = MakeRlAnalysis();
  a.mutable_cluster();  // as every saved analysis has one: `report` knows the file by its first key
  std::ofstream(json) << ToStableJson(a);
  const CommandResult r = RunMoetrace("report " + json + " --html " + html);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Shell shot = RunShell(Chromium("--enable-logging=stderr --v=0 --window-size=1280,1200 --screenshot=" + png +
                                       " file://" + html + " 2>&1"));
  ASSERT_TRUE(fs::exists(png)) << shot.out;
  EXPECT_EQ(shot.out.find("CONSOLE"), std::string::npos) << shot.out;
  std::ifstream f(png, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  Image img;
  std::string why;
  ASSERT_TRUE(DecodePng(ss.str(), &img, &why)) << why;
  size_t green = 0, red = 0;
  for (size_t i = 0; i + 2 < img.pixels.size(); i += img.channels) {
    const uint8_t r = img.pixels[i], g = img.pixels[i + 1], b = img.pixels[i + 2];
    green += r == 0x59 && g == 0xa1 && b == 0x4f;  // .rl-t0 generate_sequences
    red += r == 0xe1 && g == 0x57 && b == 0x59;    // .rl-t5 update_actor
  }
  // Two rollout boxes and two updates of ~100-300 px x 20 px each (and a legend swatch).
  EXPECT_GT(green, 2000u);
  EXPECT_GT(red, 2000u);
  const Shell dom = RunShell(Chromium("--dump-dom file://" + html + " 2>/dev/null"));
  ASSERT_EQ(dom.code, 0);
  EXPECT_EQ(dom.out.find("<ard>"), std::string::npos);
  EXPECT_NE(dom.out.find("rew&lt;ard&gt;|\"x\""), std::string::npos) << dom.out.substr(0, 4000);
}

}  // namespace
}  // namespace moetrace::testing
