// A main() for the fuzz targets without libFuzzer: runs the target once on each file named on
// the command line (or each file in each directory named), so the seed corpus and the saved
// crash inputs (fuzz/regressions/) are regression tests in every build, with any compiler.
//
//   fuzz_<target>_replay [--options] <file|dir>...
//
// --options: for the targets whose first byte chooses the propagation options, run each file
// once per options byte (0..31: both policies, every flag set, legacy mode) in front of it.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {
bool each_options_byte = false;

void run_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.string().c_str(), bytes.size());
  if (!each_options_byte) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    return;
  }
  std::vector<std::uint8_t> input(bytes.size() + 1);
  std::copy(bytes.begin(), bytes.end(), input.begin() + 1);
  for (std::uint8_t options = 0; options < 32; ++options) {
    input[0] = options;
    LLVMFuzzerTestOneInput(input.data(), input.size());
  }
}
}  // namespace

int main(int argc, char** argv) {
  std::size_t files = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--options") {
      each_options_byte = true;
      continue;
    }
    const std::filesystem::path arg = argv[i];
    if (std::filesystem::is_directory(arg)) {
      std::vector<std::filesystem::path> paths;
      for (const auto& entry : std::filesystem::directory_iterator(arg))
        if (entry.is_regular_file()) paths.push_back(entry.path());
      std::sort(paths.begin(), paths.end());
      for (const auto& p : paths) run_file(p), ++files;
    } else {
      run_file(arg), ++files;
    }
  }
  std::fprintf(stderr, "replay: %zu inputs, every invariant held\n", files);
  return files == 0 ? 1 : 0;
}
