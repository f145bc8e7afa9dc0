# CMake toolchain for 64-bit ARM Linux (AWS Graviton, Ampere Altra, Apple silicon under Docker)
# with Debian's cross compiler and multiarch libraries (apt-packages.txt, group aarch64).
# scripts/aarch64.sh builds the engine's tests with it and runs them under qemu-user.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Libraries and CMake packages from the arm64 multiarch directories only; programs from the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# Test programs (gtest_discover_tests lists them at build time) run under user-mode emulation,
# with the arm64 C library of the multiarch install (/lib/ld-linux-aarch64.so.1), not the cross
# compiler's copy: that one is an older build, and its loader with the newer libc hangs at the
# first pthread_create.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
