#include "calc.h"

namespace calc {

// additive
int add(int a, int b) { return a + b; }
int sub(int a, int b) { return a - b; }

// multiplicative

// statistics

}  // namespace calc
