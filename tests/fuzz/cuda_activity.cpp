// CUDA activity files (<pid>-<load ns>.cuda.jsonl, written by libceiling_inject_cuda.so inside
// the wrapped program, so untrusted): read_cuda_activity_file refuses a file without a header
// or of another version with std::invalid_argument; a bad line is counted, never fatal.
// capture_dir.cpp feeds the same files through the directory, as `ceiling run` reads them.
#include <sstream>

#include "agent/inject/cuda_activity_file.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::istringstream in(ceiling::fuzz::text(data, size));
    ceiling::fuzz::only_throws<std::invalid_argument>(
        [&] { (void)ceiling::inject::read_cuda_activity_file(in, "fuzz.cuda.jsonl"); });
    return 0;
}
