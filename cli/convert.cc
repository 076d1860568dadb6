#include "cli/commands.h"
void moetrace::cli::AddConvertCommand(CLI::App&) {}
