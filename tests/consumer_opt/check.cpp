// Runs the team's driver (team-opt, built by devpass_add_opt) and checks what it does: its own
// phase is an option and folds the bounce, every devpass-opt option is there, its policy is
// what --print-policy says, and a copy policy it does not compile in is a usage error.
#include <cstdio>
#include <string>

namespace {

struct result {
  int status = 0;
  std::string output;  // stdout and stderr
};

result run(const std::string& arguments) {
  const std::string command = std::string(TEAM_OPT) + " " + arguments + " 2>&1";
  result r;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {-1, "cannot run " + command};
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) r.output.append(buffer, n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

int failures = 0;
void expect(bool ok, const std::string& what, const result& r) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "FAILED: %s\n  exit %d, output:\n%s\n", what.c_str(), r.status, r.output.c_str());
}
bool has(const result& r, const std::string& text) { return r.output.find(text) != std::string::npos; }

}  // namespace

int main() {
  const std::string graph = GRAPH;
  const result help = run("--help");
  expect(
      help.status == 0 && has(help, "USAGE: team-opt") &&
          has(help, "--fold-bounces                 one d2d_copy for each h2d_copy(d2h_copy(x)) between two devices"),
      "--help lists the team's phase with its description", help);
  for (const char* option :
       {"--propagate-device", "--policy=<executorch|devpass>", "--skip-h2d-for-method-inputs", "--no-elide",
        "--plan-memory", "--stats", "--debug-rules", "--verify-each", "--print-policy"})
    expect(has(help, option), std::string("--help lists devpass-opt's ") + option, help);

  const result policy = run("--print-policy");
  expect(policy.status == 0 &&
             has(policy,
                 "\"compiled\": {\"share_copies\": false, \"elide_round_trips\": true, "
                 "\"runtime_selected\": false, \"fuse_executorch_copies\": true, \"fuse_shared_copies\": true}") &&
             has(policy, "\"policy\": \"executorch\""),
         "--print-policy shows the team's policy and the copy policy it defaults to", policy);

  const result plain = run("--propagate-device --stats " + graph + " -o /dev/null");
  expect(plain.status == 0 && has(plain, "copies: h2d 2 (") && has(plain, "d2h 2 (") && has(plain, "d2d 0 ("),
         "ExecuTorch's copies: the value goes a -> host -> b", plain);

  const result folded = run("--propagate-device --fold-bounces --stats " + graph);
  expect(folded.status == 0 && has(folded, "fold-bounces: 1 copies inserted") && has(folded, "copies: h2d 1 (") &&
             has(folded, "d2h 1 (") && has(folded, "d2d 1 (") && has(folded, "\"id\":\"a@d2d[cuda:1]\""),
         "--fold-bounces replaces the bounce by one d2d_copy, and the result is written", folded);

  const result alone = run("--fold-bounces " + graph);
  expect(alone.status == 2 && has(alone, "--fold-bounces needs --propagate-device"),
         "the phase needs explicit copies: a usage error without --propagate-device", alone);

  const result other = run("--propagate-device --policy=devpass " + graph);
  expect(other.status == 2 && has(other, "this driver's policy compiles only the executorch copies in"),
         "a copy policy the driver does not compile in is a usage error", other);

  if (failures == 0) std::printf("team-opt: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
