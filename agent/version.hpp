#pragma once
#include <string_view>

namespace ceiling {
// Filled in by agent/CMakeLists.txt from the project version and the git commit.
std::string_view version_string();
std::string_view git_commit();
std::string_view compiler_string();
std::string_view build_type();
}  // namespace ceiling
