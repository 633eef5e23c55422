#pragma once
// Pages and pictures as a browser shows them: a file rendered by headless Chromium to a PNG,
// decoded with libpng, so tests can check that it is not blank, has the expected size and shows
// the colours it should. Where Chromium cannot run, the reason is returned and the test skips.
#include <png.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace cplab::testing {

struct Picture {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  // row-major, 3 bytes per pixel
  std::string error;              // set when it could not be made or read

  // Pixels within `tolerance` of the colour 0xRRGGBB.
  std::int64_t count(std::uint32_t colour, int tolerance = 6) const {
    std::int64_t n = 0;
    const int want[3] = {static_cast<int>(colour >> 16) & 255, static_cast<int>(colour >> 8) & 255,
                         static_cast<int>(colour) & 255};
    for (std::size_t i = 0; i + 2 < rgb.size(); i += 3) {
      bool near = true;
      for (int c = 0; c < 3; ++c) near = near && std::abs(rgb[i + c] - want[c]) <= tolerance;
      n += near ? 1 : 0;
    }
    return n;
  }
  std::int64_t non_white() const {
    std::int64_t n = 0;
    for (std::size_t i = 0; i + 2 < rgb.size(); i += 3)
      n += (rgb[i] < 240 || rgb[i + 1] < 240 || rgb[i + 2] < 240) ? 1 : 0;
    return n;
  }
};

inline Picture failed_picture(const std::string& why) {
  Picture out;
  out.error = why;
  return out;
}

inline Picture read_png(const std::string& path) {
  Picture out;
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_file(&image, path.c_str()) == 0) {
    out.error = "cannot read " + path + ": " + image.message;
    return out;
  }
  image.format = PNG_FORMAT_RGB;
  out.width = static_cast<int>(image.width);
  out.height = static_cast<int>(image.height);
  out.rgb.resize(PNG_IMAGE_SIZE(image));
  if (png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr) == 0) {
    out.error = "cannot decode " + path + ": " + image.message;
    out.rgb.clear();
  }
  return out;
}

// Renders `file` at width × height in headless Chromium into `png`, with a profile folder of its
// own (so parallel tests do not share one) and everything that would reach the network off.
inline Picture render_in_chromium(const std::string& file, const std::string& png, int width,
                                  int height) {
  const char* browser = "/usr/bin/chromium";
  if (::access(browser, X_OK) != 0) return failed_picture("no /usr/bin/chromium");
  const std::filesystem::path profile = std::filesystem::temp_directory_path() /
                                        ("cplab_chromium_" + std::to_string(::getpid()) + "_" +
                                         std::filesystem::path(png).filename().string());
  std::filesystem::remove_all(profile);
  std::filesystem::create_directories(profile);
  std::filesystem::remove(png);
  const std::string command =
      std::string("timeout 120 ") + browser +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
      " --disable-background-networking --disable-component-update --disable-sync"
      " --user-data-dir=" +
      profile.string() + " --screenshot=" + png + " --window-size=" + std::to_string(width) + "," +
      std::to_string(height) + " file://" + std::filesystem::absolute(file).string() +
      " >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  std::filesystem::remove_all(profile);
  if (!std::filesystem::exists(png)) {
    return failed_picture("chromium could not render (exit status " + std::to_string(status) + ")");
  }
  return read_png(png);
}

}  // namespace cplab::testing
