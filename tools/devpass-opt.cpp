// devpass-opt — reads a devpass.graph/1 file, runs the passes its options name, writes the result
// (docs/command-line.md). The driver is devpass/driver/opt_main.hpp, with the policy that
// compiles every phase in and lets the options choose; a team's own driver is the same call with
// its own policy and phases (devpass_add_opt). The propagation is compiled in
// devpass_opt_propagation.cpp, beside this TU (DEVPASS_DECLARE_OPT_PROPAGATION).
#include "devpass/driver/opt_main.hpp"

DEVPASS_DECLARE_OPT_PROPAGATION(devpass::policy_from_options)

int main(int argc, char** argv) {
  return devpass::driver::opt_main<devpass::policy_from_options>(argc, argv, "devpass-opt");
}
