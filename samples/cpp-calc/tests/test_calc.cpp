#include <cstdio>

#include "calc.h"

static int failures = 0;
#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

int main() {
  CHECK(calc::add(2, 3) == 5);
  CHECK(calc::sub(5, 3) == 2);
  // more checks
  return failures == 0 ? 0 : 1;
}
