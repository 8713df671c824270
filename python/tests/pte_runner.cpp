// Runs one method of a .pte with ExecuTorch's C++ runtime from the pip wheel (libexecutorch.so and
// its CPU kernels, libexecutorch_kernels_optimized.so: the optimized kernels and the portable ones
// for every other operator). test_executorch_planning.py builds it at test time against the
// wheel's headers and runs it: ExecuTorch 1.5.1's Python runtime cannot return a tensor (its
// output wrapper drops the device, pytorch/executorch#21753), the C++ runtime under it can.
//
//   pte_runner PROGRAM.pte OUT_DIR [--zero MEM_ID:OFFSET:BYTES]... [SCALAR_TYPE SHAPE INPUT_FILE]...
//
// The planned buffers (the arenas the memory plan laid out, the program's mem_id 1, 2, ...) are
// allocated here at the sizes the program gives, each byte 0xFF before the run: a float read
// before the program wrote it is a NaN, not a lucky zero. --zero clears a range of one (a mutable
// buffer: ExecuTorch gives it no initial state, the caller does; torch's is zeros). Each input:
// ExecuTorch's ScalarType number (6 float, 4 long, 11 bool, ...), its sizes comma separated ("-"
// for a 0-dim tensor) and a file of its raw bytes (contiguous). Runs `forward` once, writes
// OUT_DIR/output<i>.bin, each output tensor's raw bytes, and prints a line a planned buffer and a
// line an output:
//   planned <mem_id> <bytes>
//   output <index> tensor <scalar type> <sizes, comma separated or -> <bytes>
//   output <index> other <EValue tag>
// Exits 1 with a message naming the step that failed.
#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/extension/memory_allocator/malloc_memory_allocator.h>
#include <executorch/extension/tensor/tensor_ptr.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using executorch::aten::ScalarType;
using executorch::aten::SizesType;
using executorch::extension::FileDataLoader;
using executorch::extension::MallocMemoryAllocator;
using executorch::extension::TensorPtr;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::HierarchicalAllocator;
using executorch::runtime::MemoryManager;
using executorch::runtime::Method;
using executorch::runtime::Program;
using executorch::runtime::Span;

namespace {

[[noreturn]] void fail(const std::string& what, Error error = Error::Ok) {
  std::fprintf(stderr, "pte_runner: %s", what.c_str());
  if (error != Error::Ok) std::fprintf(stderr, " (executorch error 0x%x)", static_cast<unsigned>(error));
  std::fprintf(stderr, "\n");
  std::exit(1);
}

std::vector<SizesType> sizes_of(const std::string& text) {
  std::vector<SizesType> sizes;
  if (text == "-") return sizes;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) sizes.push_back(static_cast<SizesType>(std::stoll(item)));
  return sizes;
}

std::string joined(executorch::runtime::ArrayRef<SizesType> sizes) {
  if (sizes.empty()) return "-";
  std::string out;
  for (std::size_t i = 0; i < sizes.size(); ++i) out += (i ? "," : "") + std::to_string(sizes[i]);
  return out;
}

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage =
      "usage: pte_runner PROGRAM.pte OUT_DIR [--zero MEM_ID:OFFSET:BYTES]... [SCALAR_TYPE SHAPE FILE]...";
  if (argc < 3) fail(usage);
  const std::string out_dir = argv[2];
  int next = 3;
  std::vector<std::vector<long long>> zeros;  // {mem_id, offset, bytes}
  for (; next + 1 < argc && std::string(argv[next]) == "--zero"; next += 2) {
    std::vector<long long> range;
    std::stringstream in(argv[next + 1]);
    for (std::string item; std::getline(in, item, ':');) range.push_back(std::stoll(item));
    if (range.size() != 3) fail(std::string("--zero ") + argv[next + 1] + ": not MEM_ID:OFFSET:BYTES");
    zeros.push_back(range);
  }
  if ((argc - next) % 3 != 0) fail(usage);
  executorch::runtime::runtime_init();

  auto loader = FileDataLoader::from(argv[1]);
  if (!loader.ok()) fail(std::string("cannot open ") + argv[1], loader.error());
  auto program = Program::load(&loader.get(), Program::Verification::InternalConsistency);
  if (!program.ok()) fail(std::string("cannot load the program ") + argv[1], program.error());
  auto meta = program->method_meta("forward");
  if (!meta.ok()) fail("the program has no method forward", meta.error());

  // The arenas, as the plan sized them: the offsets in the program index into these.
  std::vector<std::vector<std::uint8_t>> arenas;
  std::vector<Span<std::uint8_t>> spans;
  for (std::size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) {
    auto size = meta->memory_planned_buffer_size(i);
    if (!size.ok()) fail("planned buffer " + std::to_string(i) + ": no size", size.error());
    arenas.emplace_back(static_cast<std::size_t>(size.get()), std::uint8_t{0xFF});
    std::printf("planned %zu %lld\n", i + 1, static_cast<long long>(size.get()));
  }
  for (const auto& z : zeros) {
    if (z[0] < 1 || static_cast<std::size_t>(z[0]) > arenas.size() || z[1] < 0 || z[2] < 0 ||
        static_cast<std::size_t>(z[1] + z[2]) > arenas[z[0] - 1].size())
      fail("--zero " + std::to_string(z[0]) + ":" + std::to_string(z[1]) + ":" + std::to_string(z[2]) +
           ": outside the planned buffers");
    std::memset(arenas[z[0] - 1].data() + z[1], 0, static_cast<std::size_t>(z[2]));
  }
  for (auto& arena : arenas) spans.emplace_back(arena.data(), arena.size());
  HierarchicalAllocator planned({spans.data(), spans.size()});
  MallocMemoryAllocator method_allocator;
  MallocMemoryAllocator temp_allocator;
  MemoryManager memory(&method_allocator, &planned, &temp_allocator);
  auto method = program->load_method("forward", &memory);
  if (!method.ok()) fail("cannot load forward", method.error());

  const std::size_t inputs = static_cast<std::size_t>(argc - next) / 3;
  if (inputs != method->inputs_size())
    fail("forward takes " + std::to_string(method->inputs_size()) + " inputs, " + std::to_string(inputs) + " given");
  std::vector<std::vector<std::uint8_t>> input_bytes;
  std::vector<TensorPtr> tensors;
  for (std::size_t i = 0; i < inputs; ++i) {
    const auto type = static_cast<ScalarType>(std::stoi(argv[next + 3 * i]));
    input_bytes.push_back(read_file(argv[next + 2 + 3 * i]));
    tensors.push_back(
        executorch::extension::make_tensor_ptr(sizes_of(argv[next + 1 + 3 * i]), input_bytes.back().data(), type));
    if (tensors.back()->nbytes() != input_bytes.back().size())
      fail("input " + std::to_string(i) + ": " + std::to_string(input_bytes.back().size()) + " bytes for a tensor of " +
           std::to_string(tensors.back()->nbytes()));
    const Error set = method->set_input(EValue(*tensors.back()), i);
    if (set != Error::Ok) fail("cannot set input " + std::to_string(i), set);
  }

  const Error ran = method->execute();
  if (ran != Error::Ok) fail("forward failed", ran);

  for (std::size_t i = 0; i < method->outputs_size(); ++i) {
    const EValue& value = method->get_output(i);
    if (!value.isTensor()) {
      std::printf("output %zu other %d\n", i, static_cast<int>(value.tag));
      continue;
    }
    const auto& tensor = value.toTensor();
    const std::string path = out_dir + "/output" + std::to_string(i) + ".bin";
    std::ofstream out(path, std::ios::binary);
    out.write(static_cast<const char*>(tensor.const_data_ptr()), static_cast<std::streamsize>(tensor.nbytes()));
    if (!out) fail("cannot write " + path);
    std::printf("output %zu tensor %d %s %zu\n", i, static_cast<int>(tensor.scalar_type()),
                joined(tensor.sizes()).c_str(), tensor.nbytes());
  }
  return 0;
}
