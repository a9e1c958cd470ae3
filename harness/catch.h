// SPDX-License-Identifier: BSD-3-Clause
// One include for Catch2 v2 (Debian 12: catch2/catch.hpp) and v3 (Ubuntu 24.04: split headers).
// Tests use only what both versions have: TEST_CASE, SECTION, REQUIRE/CHECK, INFO, FAIL, GENERATE.
#pragma once

#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#define COURSE_CATCH_VERSION 3
#else
#include <catch2/catch.hpp>
#define COURSE_CATCH_VERSION 2
#endif
