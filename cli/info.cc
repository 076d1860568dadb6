#include "cli/commands.h"
void moetrace::cli::AddInfoCommand(CLI::App&) {}
