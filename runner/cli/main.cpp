#include "runner/cli/cli.h"

int main(int argc, char** argv) { return skillrunner::cli::RunCli(argc, argv); }
