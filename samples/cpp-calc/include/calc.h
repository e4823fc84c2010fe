#pragma once

// calc: small integer arithmetic used by the AirCoding demo.
namespace calc {

// additive
int add(int a, int b);
int sub(int a, int b);

// multiplicative

// statistics

}  // namespace calc
