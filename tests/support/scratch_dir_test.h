// ScratchDirTest: a GoogleTest fixture with a fresh directory of its own (one per test and process,
// under the system temp dir), removed after the test; Write() puts a file in it.
#ifndef WORLDGEN_TESTS_SUPPORT_SCRATCH_DIR_TEST_H_
#define WORLDGEN_TESTS_SUPPORT_SCRATCH_DIR_TEST_H_

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace worldgen::testing {

class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("worldgen_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // Writes `text` to `name` in the directory and returns the file's path.
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  std::filesystem::path dir_;
};

}  // namespace worldgen::testing

#endif  // WORLDGEN_TESTS_SUPPORT_SCRATCH_DIR_TEST_H_
