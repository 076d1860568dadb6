// moetrace: the command line. Wiring only; the work is in the libraries.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdio>
#include <exception>
#include <string>

#include "analyzer/distributed.h"
#include "analyzer/mpi/communicator.h"
#include "cli/commands.h"
#include "formats/errors.h"

int main(int argc, char** argv) {
  CLI::App app{"moetrace: performance engineering for MoE training on Ascend and GPU clusters"};
  app.set_version_flag("--version", std::string("moetrace ") + MOETRACE_VERSION);
  app.require_subcommand(1);
  moetrace::cli::AddCommands(app);
  try {
    // A mistyped command would otherwise read "A subcommand is required".
    if (argc > 1 && argv[1][0] != '-') {
      try {
        app.get_subcommand(std::string(argv[1]));
      } catch (const CLI::OptionNotFound&) {
        if (moetrace::IsSecondaryProcess()) return 2;
        fmt::print(stderr, "moetrace: unknown command '{}' (moetrace --help lists them)\n", argv[1]);
        return 2;
      }
    }
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Under mpirun every process parses the same arguments: one message.
    if (moetrace::IsSecondaryProcess()) return e.get_exit_code() == 0 ? 0 : 2;
    int rc = app.exit(e);
    // CLI11 returns 0 for --help/--version; every usage error is exit 2.
    return rc == 0 ? 0 : 2;
  }
  try {
    return moetrace::cli::RunSelected(app);
  } catch (const moetrace::PeerFailed&) {
    return 2;  // another process failed: process 0 prints its message
  } catch (const moetrace::InputError& e) {
    fmt::print(stderr, "moetrace: error: {}\n", e.what());
    return 2;
  } catch (const moetrace::cli::UsageError& e) {
    fmt::print(stderr, "moetrace: {}\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "moetrace: error: out of memory\n");
    return 2;
  }
}
