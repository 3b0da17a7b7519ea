// mr-sim: run scheduling policies on a simulated cluster (docs/simulator.md).
// The command line is sim/cli.h.
#include <iostream>

#include "sim/cli.h"

int main(int argc, char** argv) { return mr::sim::RunCli(argc, argv, std::cout, std::cerr); }
